import Aria2RPC
import Foundation
import NIOHTTP1
import SluiceCore
import SluiceTestSupport
import Testing

/// aria2's JSON-RPC on `/jsonrpc` (issue 22), against the real service: the same jobs as
/// REST, aria2's shapes, its token, `dir`/`out` kept inside the documents.
@Suite struct JSONRPCTests {
    /// One call; the reply's status and its JSON.
    struct RPC<Harness: APIHarness> {
        let service: Harness
        let secret: String?

        func call(_ method: String, _ params: [Any] = [], contentType: String? = nil) async throws -> (status: Int, body: [String: Any]) {
            let all: [Any] = (secret.map { ["token:\($0)"] } ?? []) + params
            let body = try JSONSerialization.data(withJSONObject: ["jsonrpc": "2.0", "id": "t", "method": method, "params": all])
            let reply = try await service.call(
                .post, "/jsonrpc", json: String(decoding: body, as: UTF8.self), contentType: contentType, authorized: false)
            #expect(reply.header("Content-Type") == "application/json-rpc")
            return (reply.status, try reply.json())
        }

        func result(_ method: String, _ params: [Any] = []) async throws -> Any {
            let (status, body) = try await call(method, params)
            guard status == 200, let result = body["result"] else {
                throw RawHTTPClient.Failure(description: "\(method) answered \(status): \(body)")
            }
            #expect(body["id"] as? String == "t")
            return result
        }

        func error(_ method: String, _ params: [Any] = []) async throws -> (status: Int, code: Int?, message: String?) {
            let (status, body) = try await call(method, params)
            let error = body["error"] as? [String: Any]
            return (status, error?["code"] as? Int, error?["message"] as? String)
        }
    }

    static func jobID(_ gid: Any) throws -> String {
        let text = try #require(gid as? String)
        return try #require(Aria2GID.jobID(of: text))
    }

    @Test func addUriMakesAJobRESTSeesAndTellStatusShowsInAria2sShapes() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            let gid = try #require(
                try await rpc.result("aria2.addUri", [[service.testdata("/testdata/256K")], ["out": "rpc.bin"]]) as? String)
            #expect(gid.count == 16 && gid.allSatisfy(\.isHexDigit))
            let id = try Self.jobID(gid)
            _ = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            let status = try #require(try await rpc.result("aria2.tellStatus", [gid]) as? [String: Any])
            #expect(status["gid"] as? String == gid)
            #expect(status["status"] as? String == "complete")
            #expect(status["totalLength"] as? String == "262144" && status["completedLength"] as? String == "262144")
            for (key, value) in status where key != "files" {
                #expect(value is String, "\(key) is \(value)")
            }
            let files = try #require(status["files"] as? [[String: Any]])
            #expect(files.first?["path"] as? String == service.data + "/documents/rpc.bin")
            #expect(status["dir"] as? String == service.data + "/documents")
            // The same call with keys.
            let few = try #require(try await rpc.result("aria2.tellStatus", [gid, ["gid", "status"]]) as? [String: Any])
            #expect(Set(few.keys) == ["gid", "status"])
            #expect((try await rpc.result("aria2.tellStopped", [0, 10]) as? [[String: Any]])?.first?["gid"] as? String == gid)
        }
    }

    @Test func withATokenEveryCallButTheListsNeedsIt() async throws {
        try await RouterHarness.with(token: "s3cret") { service in
            let anonymous = RPC(service: service, secret: nil)
            let wrong = RPC(service: service, secret: "guess")
            for rpc in [anonymous, wrong] {
                let refused = try await rpc.error("aria2.getVersion")
                #expect(refused.status == 400 && refused.code == 1 && refused.message == "Unauthorized")
            }
            #expect((try await anonymous.result("system.listMethods") as? [String])?.contains("aria2.addUri") == true)
            #expect((try await anonymous.result("system.listNotifications") as? [String])?.contains("aria2.onDownloadComplete") == true)
            let version = try #require(try await RPC(service: service, secret: "s3cret").result("aria2.getVersion") as? [String: Any])
            #expect(version["version"] as? String == "1.37.0")
            // The REST API still wants its bearer token.
            #expect(try await service.request(.get, "/jobs", authorized: false).status == 401)
        }
    }

    @Test func removeDeletesTheJobAndRPCKeepsItsResultUntilAsked() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            let gid = try #require(
                try await rpc.result("aria2.addUri", [[service.testdata("/testdata/1M")], ["pause": "true"]]) as? String)
            let id = try Self.jobID(gid)
            #expect((try await rpc.result("aria2.tellWaiting", [0, 100]) as? [[String: Any]])?.map { $0["gid"] as? String } == [gid])
            #expect(try await rpc.result("aria2.remove", [gid]) as? String == gid)
            #expect(try await service.request(.get, "/jobs/\(id)").status == 404)
            let stopped = try #require(try await rpc.result("aria2.tellStopped", [0, 10]) as? [[String: Any]])
            #expect(stopped.map { $0["status"] as? String } == ["removed"])
            #expect(try await rpc.result("aria2.removeDownloadResult", [gid]) as? String == "OK")
            let gone = try await rpc.error("aria2.tellStatus", [gid])
            #expect(gone.code == 1 && gone.message?.contains(gid) == true)
        }
    }

    @Test func pauseAndUnpauseMoveTheSameJobRESTDoes() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            let job = try await service.create(["url": service.testdata("/testdata/8M?rate=1M"), "paused": true])
            let gid = Aria2GID.of(jobID: job["id"] as! String)
            #expect((try await rpc.result("aria2.tellStatus", [gid, ["status"]]) as? [String: Any])?["status"] as? String == "paused")
            let id = job["id"] as! String
            // On the cluster's store a pause that meets the job's start answers "changed on
            // another node, try again": each pause waits until the job runs.
            let running: @Sendable ([String: Any]) -> Bool = { $0["state"] as? String == "running" }
            #expect(try await rpc.result("aria2.unpause", [gid]) as? String == gid)
            _ = try await service.waitFor(id, running)
            #expect(try await rpc.result("aria2.pause", [gid]) as? String == gid)
            #expect(try await service.job(id)["state"] as? String == "paused")
            #expect(try await rpc.result("aria2.unpauseAll") as? String == "OK")
            _ = try await service.waitFor(id, running)
            #expect(try await rpc.result("aria2.forcePauseAll") as? String == "OK")
            #expect(try await service.job(id)["state"] as? String == "paused")
            let stat = try #require(try await rpc.result("aria2.getGlobalStat") as? [String: Any])
            #expect(stat["numWaiting"] as? String == "1" && stat["numActive"] as? String == "0")
        }
    }

    @Test func aDirUnderTheDocumentsGetsTheFileAndRESTsPathShowsIt() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            let documents = service.data + "/documents"
            let gid = try #require(
                try await rpc.result(
                    "aria2.addUri", [[service.testdata("/testdata/64K")], ["dir": documents + "/music/live", "out": "a.bin"]])
                    as? String)
            let job = try await service.waitFor(try Self.jobID(gid)) { $0["state"] as? String == "completed" }
            #expect(job["path"] as? String == "music/live/a.bin")
            #expect(FileManager.default.fileExists(atPath: documents + "/music/live/a.bin"))
            let status = try #require(try await rpc.result("aria2.tellStatus", [gid, ["dir", "files"]]) as? [String: Any])
            #expect(status["dir"] as? String == documents + "/music/live")
            #expect((status["files"] as? [[String: Any]])?.first?["path"] as? String == documents + "/music/live/a.bin")
            #expect((try await rpc.result("aria2.getOption", [gid]) as? [String: Any])?["dir"] as? String == documents + "/music/live")
            // Served where it landed; a second one takes the next free name there.
            #expect(try await service.request(.get, "/files/music/live/a.bin").body.count == 64 << 10)
            let again = try #require(
                try await rpc.result(
                    "aria2.addUri", [[service.testdata("/testdata/1K")], ["dir": documents + "/music/live/", "out": "a.bin"]])
                    as? String)
            let second = try await service.waitFor(try Self.jobID(again)) { $0["state"] as? String == "completed" }
            #expect(second["path"] as? String == "music/live/a (1).bin")
            // The directory is the job's: another one is refused, its own is fine.
            #expect(try await rpc.error("aria2.changeOption", [again, ["dir": documents]]).code == 1)
            #expect(try await rpc.result("aria2.changeOption", [again, ["dir": documents + "/music/live"]]) as? String == "OK")
            // Deleting the job with its file finds it in its directory.
            #expect(try await service.request(.delete, "/jobs/\(try Self.jobID(again))?deleteFile=true").status == 204)
            #expect(!FileManager.default.fileExists(atPath: documents + "/music/live/a (1).bin"))
        }
    }

    /// A symlink that appears after the job was added is found when the file is placed.
    @Test func aDirThatLeadsOutByPlacementTimeFailsTheJob() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            let documents = service.data + "/documents"
            let gid = try #require(
                try await rpc.result(
                    "aria2.addUri", [[service.testdata("/testdata/1K")], ["dir": documents + "/later/x", "pause": "true"]])
                    as? String)
            let outside = service.data + "/outside"
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: documents + "/later", withDestinationPath: outside)
            #expect(try await rpc.result("aria2.unpause", [gid]) as? String == gid)
            let job = try await service.waitFor(try Self.jobID(gid)) { ["completed", "failed"].contains($0["state"] as? String) }
            #expect(job["state"] as? String == "failed")
            let message = (job["error"] as? [String: Any])?["message"] as? String
            #expect(message == "documents/later leads out of the documents directory")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        }
    }

    @Test func aDirOrOutOutsideTheDocumentsIsRefusedAndMakesNoJob() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            let url = service.testdata("/testdata/1K")
            let documents = service.data + "/documents"
            // A symlink in the documents to a directory outside them, and one to a file.
            let outside = service.data + "/outside"
            try FileManager.default.createDirectory(atPath: outside + "/x", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: documents + "/out", withDestinationPath: outside)
            try Data().write(to: URL(fileURLWithPath: documents + "/plain"))
            for options: [String: Any] in [
                ["dir": "/tmp"], ["dir": documents + "/../cache"], ["dir": documents + "/sub/../../cache"], ["dir": "sub"],
                ["dir": "documents/sub"], ["dir": documents + "/./sub"], ["dir": documents + "X/sub"],
                ["dir": documents + "/out"], ["dir": documents + "/out/x"], ["dir": documents + "/out/new"],
                ["dir": documents + "/plain/sub"], ["out": "../escape"], ["out": "/etc/passwd"],
                ["dir": documents, "out": "a/b"], ["dir": documents + "/sub", "out": ".."],
            ] {
                let refused = try await rpc.error("aria2.addUri", [[url], options])
                #expect(refused.status == 400 && refused.code == 1, "\(options)")
                // Messages name the documents directory (`getGlobalOption`'s `dir`) and paths
                // within it, never the service's other directories.
                let shown = refused.message?.replacingOccurrences(of: documents, with: "DOCUMENTS")
                #expect(shown?.contains(service.data) == false, "\(refused.message ?? "")")
            }
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["x"])
            #expect(!FileManager.default.fileExists(atPath: documents + "/sub"))
            // The directory it was told, sent back as AriaNg does, is fine.
            let options = try #require(try await rpc.result("aria2.getGlobalOption") as? [String: Any])
            #expect(try await rpc.result("aria2.addUri", [[url], ["dir": options["dir"]!, "pause": "true"]]) is String)
        }
    }

    @Test func batchesMulticallAndMalformedBodies() async throws {
        try await RouterHarness.with { service in
            let batch = #"[{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion"},{"jsonrpc":"2.0","id":2,"method":"aria2.nothing"}]"#
            let answers =
                try JSONSerialization.jsonObject(
                    with: try await service.request(.post, "/jsonrpc", json: batch, contentType: nil).body) as? [[String: Any]]
            #expect(answers?.count == 2)
            #expect((answers?[0]["result"] as? [String: Any])?["version"] != nil)
            #expect((answers?[1]["error"] as? [String: Any])?["code"] as? Int == -32601)
            let multicall = try await RPC(service: service, secret: nil).result(
                "system.multicall",
                [[["methodName": "aria2.getSessionInfo", "params": []], ["methodName": "aria2.tellStatus", "params": ["zz"]]]])
            let results = try #require(multicall as? [Any])
            #expect(((results[0] as? [Any])?.first as? [String: Any])?["sessionId"] is String)
            #expect((results[1] as? [String: Any])?["code"] as? Int == 1)
            for (body, code, status) in [("{", -32700, 400), ("7", -32600, 400), (#"{"method":"x.y"}"#, -32601, 404)] {
                let reply = try await service.request(.post, "/jsonrpc", json: body, contentType: "text/plain")
                #expect(reply.status == status, "\(body)")
                #expect((try reply.json()["error"] as? [String: Any])?["code"] as? Int == code, "\(body)")
            }
            #expect(try await service.request(.get, "/jsonrpc").status == 405)
            // A page of another site may not make jobs through it (the Origin rule of
            // docs/security.md, "Browsers").
            let crossSite = try await service.request(
                .post, "/jsonrpc", json: #"{"method":"aria2.addUri","params":[["http://127.0.0.1:1/x"]]}"#,
                headers: ["Origin": "http://evil.example"])
            #expect(crossSite.status == 403)
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func shutdownIsRefusedWithoutRPCAllowShutdown() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            for method in ["aria2.shutdown", "aria2.forceShutdown"] {
                let refused = try await rpc.error(method)
                #expect(refused.code == 1 && refused.message?.contains("--rpc-allow-shutdown") == true)
            }
            #expect(try await service.request(.get, "/healthz").status == 200)
        }
    }

    @Test func globalOptionsChangeTheQueue() async throws {
        try await RouterHarness.with { service in
            let rpc = RPC(service: service, secret: nil)
            #expect(
                try await rpc.result("aria2.changeGlobalOption", [["max-concurrent-downloads": "5", "max-overall-download-limit": "1M"]])
                    as? String == "OK")
            let queue = try await service.request(.get, "/queue").json()
            #expect(queue["maxActive"] as? Int == 5 && queue["limitRate"] as? Int == 1 << 20)
            let options = try #require(try await rpc.result("aria2.getGlobalOption") as? [String: Any])
            #expect(options["max-concurrent-downloads"] as? String == "5")
        }
    }
}
