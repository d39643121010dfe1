import Foundation
import SluiceTestSupport
import Testing

/// Issue 20, point 5: a deleted dependency fails its dependents in one pass, before the
/// DELETE answers, however long the chain.
@Suite struct DependencyChainTests {
    @Test func deletingTheHeadOfAChainFailsEveryLinkBeforeTheAnswer() async throws {
        try await RouterHarness.with { service in
            let head = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String
            var previous = head
            var chain: [String] = []
            for _ in 0..<400 {
                previous = try await service.create(["url": service.testdata("/testdata/1K"), "after": [previous]])["id"] as! String
                chain.append(previous)
            }
            let start = ContinuousClock.now
            let deleted = try await service.request(.delete, "/jobs/\(head)")
            let took = ContinuousClock.now - start
            #expect(deleted.status == 204)
            // Already failed when the DELETE answered, the last link included.
            let states = try await service.states()
            #expect(chain.allSatisfy { states[$0] == "failed" }, "\(chain.filter { states[$0] != "failed" }.count) links not failed")
            let last = try await service.job(chain.last!)
            #expect((last["error"] as? [String: Any])?["code"] as? String == "dependency_failed")
            #expect(took < .seconds(10), "\(took)")
        }
    }
}
