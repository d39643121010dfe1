import DownloadEngine
import Foundation
import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// docs/security.md, "Targets": a runner whose client refuses private networks (a service
/// bound beyond loopback) refuses jobs that would reach loopback, private or link-local
/// addresses, and sends them no request at all; one that allows them completes the same jobs.
/// Below the API, on the real engine against the test origin (`TargetPolicyServiceTests`
/// checks which policy a bind gives).
@Suite struct TargetRefusalTests {
    @Test func aRunnerThatRefusesInternalTargetsSendsThemNothing() async throws {
        try await RunnerOnTheOrigin.with(client: { Fetcher(policy: .publicOnly) }) { runner in
            for host in ["127.0.0.1", "2130706433", "0x7f.1", "[::1]", "[::ffff:127.0.0.1]", "169.254.169.254", "10.1.2.3", "[fe80::1]"] {
                let request = try JobServiceTests.request("http://\(host):\(runner.port)/testdata/1M")
                let refused = await #expect(throws: SluiceError.self, "\(host)") { _ = try await runner.scheduler.create(request) }
                #expect(refused?.code == .forbiddenTarget, "\(host)")
            }
            // A name is checked when it is resolved: the job fails, having sent nothing.
            let id = try await runner.create(["url": "http://localhost:\(runner.port)/testdata/1M"])
            let failed = try await runner.waitFor(id) { $0.state == .failed }
            #expect(failed.error?.code == SluiceError.Code.forbiddenTarget.rawValue)
            #expect(try await runner.scheduler.list(states: nil, limit: 10, after: nil).count == 1)
            #expect(runner.recorder.all.isEmpty)
        }
    }

    @Test func allowingPrivateNetworksLetsTheSameJobsComplete() async throws {
        try await RunnerOnTheOrigin.with(client: { Fetcher(policy: .allowAll) }) { runner in
            for host in ["127.0.0.1", "2130706433", "localhost"] {
                let id = try await runner.create(["url": "http://\(host):\(runner.port)/testdata/256K", "filename": "\(host).bin"])
                let done = try await runner.waitFor(id) { !$0.state.isLive }
                #expect(done.state == .completed, "\(host): \(done.error?.message ?? "")")
                #expect(runner.holdsTestData(done, size: 256 << 10))
            }
            #expect(!runner.recorder.all.isEmpty)
        }
    }
}
