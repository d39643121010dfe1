import Foundation
import SluiceTestSupport
import Testing

/// What a second reading of the queue's code found: races between a bulk action and the
/// scheduler, and rates no conversion may trap on (the race between two edits, which needs
/// the real engine's probe, is in `NewLinkTests`, JobServiceTests).
@Suite struct QueueRaceTests {
    /// Pausing every job used to free the running job's slot mid-way, and the queue started
    /// a job the same request was about to pause.
    @Test func pauseAllStartsNothingOnTheWay() async throws {
        try await RouterHarness.with(maxActive: 1) { (service: RouterHarness) async throws in
            // 64 s at 1 MiB/s: it is still running when the pause comes, however slow the
            // machine (at 4 MiB/s, under a whole test pass, it once finished first and the
            // waiting job rightly started).
            let running = try await service.create(["url": service.testdata("/testdata/64M?rate=1M")])["id"] as! String
            try await service.waitFor(running) { $0["state"] as? String == "running" }
            let waiting = try await service.create(["url": service.testdata("/testdata/64M?rate=4M&seed=2")])["id"] as! String
            var reader = try await service.events(jobID: waiting)
            _ = try await reader.until { _, data in data["state"] as? String == "queued" }
            #expect(try await service.request(.post, "/jobs/pause").status == 200)
            let next = try await reader.until { _, data in data["state"] as? String != "queued" }
            #expect(next.data["state"] as? String == "paused", "the waiting job went \(next.data["state"] ?? "?") first")
        }
    }

    /// A rate near Int64.max passed validation, and the next stall check of a running
    /// download trapped converting it back to Int64.
    @Test func ratesAreBoundedAtOneTebibytePerSecond() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            for body in [["limitRate": Int64.max], ["limitRate": (1 << 40) + 1]] as [[String: Any]] {
                let reply = try await service.send(.patch, "/queue", body)
                #expect(reply.status == 400)
                #expect(reply.errorField == "limitRate")
            }
            let create = try await service.send(.post, "/jobs", ["url": service.testdata("/testdata/1M"), "limitRate": Int64.max])
            #expect(create.status == 400)
            #expect(try await service.send(.patch, "/queue", ["limitRate": 1 << 40]).status == 200)
            let id = try await service.create(["url": service.testdata("/testdata/8M?rate=4M")])["id"] as! String
            try await service.waitFor(id) { $0["state"] as? String == "completed" }
        }
    }
}
