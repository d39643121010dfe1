import Foundation
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing
import NIOHTTP1

/// The input limits and file modes (docs/security.md, "Input" and "Files"), and the shape of
/// what every answer looks like. In process (`RouterHarness`).
@Suite struct InputLimitTests {
    @Test func urlsAndHeadersAreBounded() async throws {
        try await RouterHarness.with { service in
            let prefix = "http://127.0.0.1:1/"
            let longest = prefix + String(repeating: "a", count: 8192 - prefix.utf8.count)
            let tooLong = longest + "a"
            let refused = try await service.request(.post, "/jobs", json: #"{"url":"\#(tooLong)","paused":true}"#)
            #expect(refused.status == 400)
            #expect(refused.errorCode == "invalid_url")
            let accepted = try await service.request(.post, "/jobs", json: #"{"url":"\#(longest)","paused":true}"#)
            #expect(accepted.status == 201)

            let many = Dictionary(uniqueKeysWithValues: (0..<65).map { ("X-H\($0)", "v") })
            let tooMany = try await service.request(
                .post, "/jobs",
                json: String(decoding: try JSONSerialization.data(withJSONObject: ["url": prefix, "headers": many]), as: UTF8.self)
            )
            #expect(tooMany.status == 400)
            #expect(tooMany.errorCode == "invalid_field")
            let big = ["X-Big": String(repeating: "b", count: 8 << 10)]
            let tooBig = try await service.request(
                .post, "/jobs",
                json: String(decoding: try JSONSerialization.data(withJSONObject: ["url": prefix, "headers": big]), as: UTF8.self)
            )
            #expect(tooBig.status == 400)
            #expect(tooBig.errorCode == "invalid_field")
            let sixtyFour = Dictionary(uniqueKeysWithValues: (0..<64).map { ("X-H\($0)", "v") })
            let fine = try await service.request(
                .post, "/jobs",
                json: String(
                    decoding: try JSONSerialization.data(withJSONObject: ["url": prefix, "headers": sixtyFour, "paused": true]),
                    as: UTF8.self)
            )
            #expect(fine.status == 201)
            // Only the two accepted jobs exist.
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.count == 2)
        }
    }

    @Test(.disabled(if: ServiceHarness.onPostgres, "the SQLite store's files"))
    func theDataDirectoryAndTheStoreAreThisUsersOnly() async throws {
        try await RouterHarness.with { service in
            _ = try await service.create(["url": "http://127.0.0.1:1/x", "paused": true, "headers": ["Cookie": "a=b"]])
            func mode(_ path: String) throws -> Int {
                (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
            }
            #expect(try mode(service.data) == 0o700)
            #expect(try mode(service.data + "/cache") == 0o700)
            for file in ["sluice.sqlite", "sluice.sqlite-wal", "sluice.sqlite-shm"] {
                let path = service.data + "/" + file
                guard FileManager.default.fileExists(atPath: path) else { continue }
                #expect(try mode(path) == 0o600, "\(file)")
            }
            #expect(try mode(service.data + "/sluice.sqlite") == 0o600)
        }
    }

    @Test func anyMethodOnAKnownPathIs405WithAllow() async throws {
        try await RouterHarness.with(token: "t") { service in
            for (method, path, allow) in [
                ("TRACE", "/jobs", "GET, POST, DELETE, HEAD"), ("OPTIONS", "/jobs", "GET, POST, DELETE, HEAD"),
                ("PUT", "/jobs/x", "GET, PATCH, DELETE, HEAD"),
                ("TRACE", "/jobs/x/pause", "POST"), ("PATCH", "/events", "GET, HEAD"), ("TRACE", "/testdata/1K", "GET, HEAD"),
                ("DELETE", "/metrics", "GET, HEAD"), ("TRACE", "/files/a", "GET, HEAD"),
            ] {
                let reply = try await service.raw(method, path, authorized: true)
                #expect(reply.status == 405, "\(method) \(path)")
                #expect(reply.header("Allow") == allow, "\(method) \(path)")
                #expect(String(decoding: reply.body, as: UTF8.self).contains(#""code":"method_not_allowed""#))
            }
            // The dashboard's files too, and without the token: they are open.
            for (method, path) in [("TRACE", "/"), ("POST", "/index.html"), ("DELETE", "/js/app.js"), ("QUERY", "/css/base.css")] {
                let reply = try await service.raw(method, path)
                #expect(reply.status == 405, "\(method) \(path)")
                #expect(reply.header("Allow") == "GET, HEAD")
            }
            #expect(try await service.raw("POST", "/no-such-file.js").status == 404)
            // Open routes answer 405 without the token; guarded ones ask for it first.
            #expect(try await service.raw("TRACE", "/healthz").status == 405)
            #expect(try await service.raw("POST", "/openapi.yaml").status == 405)
            #expect(try await service.raw("TRACE", "/jobs").status == 401)
        }
    }

    @Test func inventedMethodsDoNotInventMetricSeries() async throws {
        try await RouterHarness.with { service in
            // (Methods the HTTP parser does not know never reach the routes:
            // `ConnectionLimitTests.aMethodTheParserDoesNotKnowIs400`.)
            for method in ["PROPFIND", "MKCOL", "PURGE", "QUERY", "LINK"] {
                let reply = try await service.raw(method, "/jobs")
                #expect(reply.status == 405, "\(method)")
                #expect(reply.header("Allow") == "GET, POST, DELETE, HEAD")
            }
            let text = String(decoding: try await service.request(.get, "/metrics").body, as: UTF8.self)
            #expect(!text.contains("PROPFIND"))
            #expect(text.contains(#"method="other""#))
        }
    }

    @Test func jobJSONKeepsTheContractsKeyOrder() async throws {
        try await RouterHarness.with { service in
            let id = try await service.create(["url": "http://127.0.0.1:1/x", "paused": true])["id"] as! String
            let expected = [
                "id", "url", "state", "filename", "bytesTotal", "bytesDone", "progress", "speed", "eta", "connections",
                // `integrity`'s and `sources`' own keys follow them (the pattern reads every key).
                "resumable", "sha256", "integrity", "expected", "verified", "signature", "sources", "url", "bytes", "failures", "state",
                "path", "error", "priority", "createdAt",
                "updatedAt", "completedAt", "retryAt",
                "after", "waitingFor", "heldBy", "startAt", "ignoreSchedule", "limitRate", "notify", "proxy", "insecure", "node",
            ]
            for _ in 0..<5 {
                let body = String(decoding: try await service.request(.get, "/jobs/\(id)").body, as: UTF8.self)
                #expect(Self.topLevelKeys(body) == expected, "\(body)")
            }
            let error = String(decoding: try await service.request(.get, "/jobs/nope").body, as: UTF8.self)
            #expect(error == #"{"error":{"code":"not_found","message":"no job nope"}}"#)
        }
    }

    /// The keys of a flat JSON object, in the order they appear.
    static func topLevelKeys(_ json: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: #"[{,]"([A-Za-z0-9]+)":"#)
        let range = NSRange(json.startIndex..., in: json)
        return pattern.matches(in: json, range: range).compactMap { Range($0.range(at: 1), in: json).map { String(json[$0]) } }
    }
}
