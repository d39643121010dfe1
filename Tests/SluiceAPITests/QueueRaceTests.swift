import Foundation
import SluiceTestSupport
import Testing

/// What a second reading of the queue's code found: races between an edit, a bulk action
/// and the scheduler, and rates no conversion may trap on.
@Suite struct QueueRaceTests {
    /// While an edit waits for its probe, a second edit of the same job used to restart the
    /// stopped run under the old URL, and the first edit's new URL was then never used.
    @Test func aSecondEditWhileTheFirstWaitsIsRefused() async throws {
        // The harness's 5 s read timeout would take the slow URL below for a stall.
        try await ServiceHarness.with(configure: { $0.stallTimeout = 30 }) { (service: ServiceHarness) async throws in
            // At 4 MiB/s the run has 7 s left once 4 MiB are on disk: a loaded CI machine once
            // let it complete at 8 MiB/s before the edit stopped it (the edit was then 409).
            let id =
                try await service.create(["url": service.testdata("/testdata/32M?seed=21&rate=4M"), "connections": 1])["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) >= 4 << 20 }
            // The same file at a URL that answers after 5 s: the first edit waits on its probe
            // (long enough for the second request to arrive meanwhile on a loaded machine).
            let slow = service.testdata("/testdata/32M?seed=21&delay=5000")
            async let first = service.send(.PATCH, "/jobs/\(id)", ["url": slow])
            // Stopped by the first edit (no segment is fetched) while still `running`: the probe waits.
            try await service.eventually("the first edit stopped the run", timeout: .seconds(4)) {
                let segments =
                    try JSONSerialization.jsonObject(with: try await service.request(.GET, "/jobs/\(id)/segments").body) as! [[String: Any]]
                return !segments.isEmpty && segments.allSatisfy { $0["active"] as? Bool == false }
            }
            #expect(try await service.job(id)["state"] as? String == "running")
            let second = try await service.send(.PATCH, "/jobs/\(id)", ["priority": 3])
            #expect(second.status == 409)
            #expect(second.errorCode == "invalid_transition")
            let edited = try await first
            #expect(edited.status == 200)
            #expect(try edited.json()["url"] as? String == slow)
            #expect(try edited.json()["state"] as? String == "running")
            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 32 << 20, seed: 21))
        }
    }

    /// Pausing every job used to free the running job's slot mid-way, and the queue started
    /// a job the same request was about to pause.
    @Test func pauseAllStartsNothingOnTheWay() async throws {
        try await ServiceHarness.with(maxActive: 1) { (service: ServiceHarness) async throws in
            let running = try await service.create(["url": service.testdata("/testdata/64M?rate=4M")])["id"] as! String
            try await service.waitFor(running) { $0["state"] as? String == "running" }
            let waiting = try await service.create(["url": service.testdata("/testdata/64M?rate=4M&seed=2")])["id"] as! String
            var reader = EventReader(try await service.events("/jobs/\(waiting)/events"))
            _ = try await reader.until { _, data in data["state"] as? String == "queued" }
            #expect(try await service.request(.POST, "/jobs/pause").status == 200)
            let next = try await reader.until { _, data in data["state"] as? String != "queued" }
            #expect(next.data["state"] as? String == "paused", "the waiting job went \(next.data["state"] ?? "?") first")
        }
    }

    /// A rate near Int64.max passed validation, and the next stall check of a running
    /// download trapped converting it back to Int64.
    @Test func ratesAreBoundedAtOneTebibytePerSecond() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            for body in [["limitRate": Int64.max], ["limitRate": (1 << 40) + 1]] as [[String: Any]] {
                let reply = try await service.send(.PATCH, "/queue", body)
                #expect(reply.status == 400)
                #expect(reply.errorField == "limitRate")
            }
            let create = try await service.send(.POST, "/jobs", ["url": service.testdata("/testdata/1M"), "limitRate": Int64.max])
            #expect(create.status == 400)
            #expect(try await service.send(.PATCH, "/queue", ["limitRate": 1 << 40]).status == 200)
            let id = try await service.create(["url": service.testdata("/testdata/8M?rate=4M")])["id"] as! String
            try await service.waitFor(id) { $0["state"] as? String == "completed" }
        }
    }
}
