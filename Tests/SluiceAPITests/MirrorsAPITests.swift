import Aria2RPC
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// `mirrors` through the service (CONTRACT.md §8): listed as `sources` from creation, tried
/// in turn without a digest, aria2's `addUri` with several URIs makes one job with mirrors,
/// and what cannot be a mirror is refused.
@Suite struct MirrorsAPITests {
    static func sources(_ job: [String: Any]) -> [[String: Any]] { job["sources"] as? [[String: Any]] ?? [] }

    @Test func aJobListsItsSourcesAndFallsBackToAMirror() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let primary = service.testdata("/testdata/300000?status=404")
            let mirror = service.testdata("/testdata/300000?seed=3")
            let paused = try await service.create(["url": primary, "mirrors": [mirror], "paused": true])
            let listed = Self.sources(paused)
            #expect(listed.map { $0["url"] as? String } == [primary, mirror], "\(paused)")
            #expect(listed.allSatisfy { $0["state"] as? String == "ok" && $0["bytes"] as? Int == 0 && $0["failures"] as? Int == 0 })
            let id = paused["id"] as! String
            #expect(try await service.call(.post, "/jobs/\(id)/resume", json: nil).status == 200)
            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            let ended = Self.sources(done)
            #expect(ended.map { $0["state"] as? String } == ["failed", "ok"], "\(done)")
            #expect(ended.last?["bytes"] as? Int == 300_000)
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 300_000, seed: 3))
            // aria2's view: both URIs tried (aria2c marks a URI it has used `used`).
            let rpc = JSONRPCTests.RPC(service: service, secret: nil)
            let uris = try await rpc.result("aria2.getUris", [Aria2GID.of(jobID: id)]) as? [[String: Any]]
            #expect(uris?.map { $0["status"] as? String } == ["used", "used"], "\(String(describing: uris))")
        }
    }

    @Test func whatCannotBeAMirrorIsRefused() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let url = service.testdata("/testdata/1000")
            for (mirrors, words) in [
                ([url], "each URL once, and not the url"), (["http://127.0.0.1:9/a", "http://127.0.0.1:9/a"], "each URL once"),
                (["ftp://127.0.0.1/a"], "only http and https"), (["a.iso"], "mirrors has no scheme: did you mean http://a.iso?"),
                ((0...16).map { "http://127.0.0.1:9/\($0)" }, "at most 16"),
            ] as [([Any], String)] {
                let refused = try await service.send(.post, "/jobs", ["url": url, "mirrors": mirrors])
                let body = String(decoding: refused.bodyData, as: UTF8.self)
                #expect(refused.status == 400 && refused.errorField == "mirrors" && body.contains(words), "\(mirrors): \(body)")
            }
            let wrongType = try await service.send(.post, "/jobs", ["url": url, "mirrors": "http://127.0.0.1:9/a"])
            #expect(wrongType.status == 400 && wrongType.errorField == "mirrors")
            let listed = try await service.call(.get, "/jobs", json: nil).json()["jobs"] as? [[String: Any]]
            #expect(listed?.isEmpty == true, "a refused create made nothing")
        }
    }

    @Test func aria2sAddUriWithSeveralURIsMakesOneJobWithMirrors() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let rpc = JSONRPCTests.RPC(service: service, secret: nil)
            let uris = ["http://127.0.0.1:9/a.iso", "http://127.0.0.1:9/mirror/a.iso", "http://127.0.0.1:9/a.iso"]
            let gid = try await rpc.result("aria2.addUri", [uris, ["pause": "true"]]) as! String
            let listed = try await rpc.result("aria2.getUris", [gid]) as? [[String: Any]]
            #expect(listed?.map { $0["uri"] as? String } == Array(uris.prefix(2)), "\(String(describing: listed))")
            // As aria2c 1.36 lists a paused download's URIs: none used yet (it said "used" for
            // the first before, which aria2c does not).
            #expect(listed?.map { $0["status"] as? String } == ["waiting", "waiting"])
        }
    }
}
