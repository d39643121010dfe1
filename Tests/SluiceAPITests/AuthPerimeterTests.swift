import Foundation
import HTTPTypes
import Logging
import Prometheus
import RangeOrigin
import SluiceServer
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing
import NIOHTTP1

/// The token rule (docs/api.md, "Authentication"): deny by default, decided on the route a
/// request is routed to, whatever the spelling of its path.
@Suite struct AuthPerimeterTests {
    /// Spellings of `path` that a router or a proxy might treat as the same route.
    static func spellings(of path: String) -> [String] {
        let (bare, query) = path.split(separator: "?", maxSplits: 1).map(String.init).pair
        let suffix = query.map { "?" + $0 } ?? ""
        let trimmed = String(bare.dropFirst())
        let first = trimmed.first.map(String.init) ?? ""
        let encodedFirst = String(format: "%%%02X", first.unicodeScalars.first!.value)
        var result = [
            bare + suffix, "/" + bare + suffix, bare + "/" + suffix, "//" + trimmed + "/" + suffix,
            "/./" + trimmed + suffix, bare + "/." + suffix, "/" + encodedFirst + trimmed.dropFirst() + suffix,
            "/" + encodedFirst.lowercased() + trimmed.dropFirst() + suffix, "/x/../" + trimmed + suffix,
            "/healthz/../" + trimmed + suffix, bare + ";x" + suffix, bare.replacingOccurrences(of: "/", with: "//") + suffix,
        ]
        // A query naming an open route.
        result.append(bare + (query == nil ? "?" : suffix + "&") + "next=/healthz")
        result.append(bare + (query == nil ? "?" : suffix + "&") + "path=/openapi.yaml")
        return result
    }

    static let token = "s3cret-token"

    @Test func noSpellingOfAGuardedRouteAnswersWithoutTheToken() async throws {
        try await RouterHarness.with(token: Self.token) { (service: RouterHarness) async throws in
            // A completed job with a file, so that a bypass would have something to show or delete.
            try "<h1>secret</h1>".write(toFile: service.data + "/documents/report.html", atomically: true, encoding: .utf8)
            let job = try await service.create([
                "url": service.testdata("/testdata/1K"), "headers": ["Authorization": "Bearer \(Self.token)"],
            ])
            let id = job["id"] as! String
            try await service.waitFor(id) { $0["state"] as? String == "completed" }
            let routes: [(String, String)] = [
                ("GET", "/jobs"), ("HEAD", "/jobs"), ("POST", "/jobs"), ("GET", "/jobs/\(id)"),
                ("DELETE", "/jobs/\(id)?deleteFile=true"), ("POST", "/jobs/\(id)/pause"), ("POST", "/jobs/\(id)/resume"),
                ("GET", "/jobs/\(id)/events"), ("GET", "/events"), ("GET", "/metrics"), ("GET", "/files/report.html"),
                ("GET", "/testdata/10"), ("HEAD", "/testdata/1T"), ("GET", "/nodes"),
            ]
            var tried = 0
            for (method, path) in routes {
                for spelling in Self.spellings(of: path) {
                    let body = method == "POST" ? #"{"url":"http://127.0.0.1:1/x"}"# : nil
                    let reply = try await service.raw(method, spelling, body: body)
                    tried += 1
                    #expect([401, 404].contains(reply.status), "\(method) \(spelling) answered \(reply.status)")
                    if reply.status == 401 {
                        #expect(reply.header("WWW-Authenticate") == "Bearer", "\(method) \(spelling)")
                    }
                    if method != "HEAD" {
                        #expect(!String(decoding: reply.body, as: UTF8.self).contains("secret</h1>"), "\(method) \(spelling)")
                    }
                }
                // The spellings the router folds into the route are refused by the token check itself.
                let doubled = try await service.raw(method, "/" + path, body: method == "POST" ? "{}" : nil)
                #expect(doubled.status == 401, "\(method) /\(path)")
            }
            #expect(tried > 150)
            // Nothing happened: still one job, completed, its file in place.
            let jobs = try await service.request(.get, "/jobs").json()["jobs"] as? [[String: Any]]
            #expect(jobs?.count == 1)
            #expect(jobs?.first?["state"] as? String == "completed")
            let path = try #require(jobs?.first?["path"] as? String)
            #expect(FileManager.default.fileExists(atPath: service.data + "/documents/" + path))
            // The open routes stay open, the dashboard loads, and the token opens the rest.
            #expect(try await service.raw("GET", "/healthz").status == 200)
            #expect(try await service.raw("GET", "//healthz/").status == 200)
            #expect(try await service.raw("GET", "/openapi.yaml").status == 200)
            #expect(try await service.raw("GET", "/").status == 200)
            #expect(try await service.raw("GET", "/js/app.js").status == 200)
            #expect(try await service.raw("GET", "//jobs", authorized: true).status == 200)
            #expect(try await service.raw("GET", "/testdata/10", authorized: true).status == 200)
        }
    }

    @Test func aWrongTokenOfAnyLengthIsRefused() async throws {
        try await RouterHarness.with(token: Self.token) { (service: RouterHarness) async throws in
            for guess in ["", "s", "s3cret-toke", "s3cret-tokenX", "S3CRET-TOKEN", String(repeating: "s", count: 4096)] {
                let reply = try await service.raw("GET", "/jobs", headers: ["Authorization": "Bearer \(guess)"])
                #expect(reply.status == 401, "\(guess.prefix(20))")
            }
            let scheme = try await service.raw("GET", "/jobs", headers: ["Authorization": "bEaReR \(Self.token)"])
            #expect(scheme.status == 200)
            let basic = try await service.raw("GET", "/jobs", headers: ["Authorization": "Basic \(Self.token)"])
            #expect(basic.status == 401)
        }
    }

    @Test func anEmptyTokenIsAConfigurationError() async throws {
        await #expect(throws: SluiceError.self) {
            try await RouterHarness.with(token: "") { _ in }
        }
        // The server alone refuses it too: its fast path for files must never take an empty
        // token for none (it once did, behind the router's own refusal).
        try await withTemporaryDirectory { directory in
            let service = try await buildService(
                configuration: ServiceConfiguration(dataDirectory: directory.path + "/data"), logger: Logger(label: "test")
            )
            var empty = ServiceConfiguration(dataDirectory: directory.path + "/data", token: "")
            empty.originRoot = directory.path
            #expect(throws: SluiceError.self) {
                _ = try buildApplication(
                    configuration: empty.api, routes: service.routes, origin: try RangeOrigin(root: directory.path),
                    metrics: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()), logger: Logger(label: "test")
                )
            }
            try await service.stopJobs()
        }
    }

    @Test func everyProtectedRouteNeedsTheToken() async throws {
        try await RouterHarness.with(token: "s3cret") { service in
            for (method, path) in [
                (HTTPRequest.Method.get, "/jobs"), (.post, "/jobs"), (.get, "/jobs/x"), (.delete, "/jobs/x"), (.get, "/events"),
                (.get, "/metrics"), (.get, "/files/x"), (.get, "/testdata/10"), (.get, "/nodes"),
            ] {
                let reply = try await service.request(method, path, json: #"{"url":"http://x/a"}"#, authorized: false)
                #expect(reply.status == 401, "\(method) \(path)")
                #expect(reply.header("WWW-Authenticate") == "Bearer")
                #expect(reply.errorCode == "unauthorized")
                let wrong = try await service.request(method, path, headers: ["Authorization": "Bearer s3cres"], authorized: false)
                #expect(wrong.status == 401)
            }
            // Nothing happened: no job was created by the refused POST.
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
            #expect(try await service.request(.get, "/healthz", authorized: false).status == 200)
            #expect(try await service.request(.get, "/testdata/10").status == 200)
            #expect(try await service.request(.get, "/jobs").status == 200)
        }
    }
}

extension Array where Element == String {
    fileprivate var pair: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}
