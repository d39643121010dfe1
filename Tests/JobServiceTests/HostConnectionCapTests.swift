import DownloadEngine
import Foundation
import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 13: `--max-connections-per-host` holds across jobs, seen from the origin, and the
/// queue shows the connections open to each host. Below the API: the cap is the runner's
/// and the engine's (`HostConnections`), on the real engine against the test origin.
@Suite(.serialized) struct HostConnectionCapTests {
    @Test func threeJobsOfEightConnectionsNeverOpenMoreThanTheCap() async throws {
        try await RunnerOnTheOrigin.with(configure: { $0.hostConnections = HostConnections(limit: 6) }) { runner in
            let scheduler = runner.scheduler
            #expect(scheduler.queue().maxConnectionsPerHost == 6)
            // 16 MiB each at 8 MiB/s: about two seconds of overlap, eight segments each.
            var ids: [String] = []
            for seed in 1...3 {
                ids.append(
                    try await runner.create([
                        "url": runner.testdata("/testdata/16M?seed=\(seed)"), "connections": 8, "limitRate": 8 << 20,
                    ]))
            }
            let host = "127.0.0.1:\(runner.port)"
            var most = 0
            let reached = await waitUntil(.seconds(30), every: .milliseconds(20)) {
                let open = scheduler.queue().connectionsPerHost[host] ?? 0
                most = max(most, open)
                return open == 6
            }
            #expect(reached, "the queue shows six connections to the origin")
            for (index, id) in ids.enumerated() {
                let job = try await runner.waitFor(id) { !$0.state.isLive }
                #expect(job.state == .completed, "\(job.error?.message ?? "")")
                #expect(runner.holdsTestData(job, size: 16 << 20, seed: UInt64(index + 1)))
            }
            #expect(most <= 6)
            let concurrent = runner.recorder.maximumConcurrent
            #expect(concurrent <= 6, "the origin answered \(concurrent) requests at once")
            // Once done, nothing is held.
            #expect(
                await waitUntil(.seconds(10), every: .milliseconds(20)) { scheduler.queue().connectionsPerHost.isEmpty },
                "no connection is counted after the jobs")
        }
    }
}
