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
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { origin in
            try await withOrigin(root: origin.path, recorder: recorder) { port in
                try await withTemporaryDirectory { directory in
                    try await JobServiceTests.withScheduler(
                        directory, store: InMemoryJobRepository(), client: Fetcher(policy: .publicOnly)
                    ) { scheduler in
                        for host in [
                            "127.0.0.1", "2130706433", "0x7f.1", "[::1]", "[::ffff:127.0.0.1]", "169.254.169.254", "10.1.2.3", "[fe80::1]",
                        ] {
                            let request = try JobServiceTests.request("http://\(host):\(port)/testdata/1M")
                            await #expect(throws: SluiceError.self, "\(host)") { _ = try await scheduler.create(request) }
                            do { _ = try await scheduler.create(request) } catch let error as SluiceError {
                                #expect(error.code == .forbiddenTarget, "\(host)")
                            }
                        }
                        // A name is checked when it is resolved: the job fails, having sent nothing.
                        let id = try await scheduler.create(try JobServiceTests.request("http://localhost:\(port)/testdata/1M")).job.id
                        let failed = try await JobServiceTests.waitFor(id, on: scheduler) { $0.state == .failed }
                        #expect(failed.error?.code == SluiceError.Code.forbiddenTarget.rawValue)
                        #expect(try await scheduler.list(states: nil, limit: 10, after: nil).count == 1)
                    }
                }
            }
        }
        #expect(recorder.all.isEmpty)
    }

    @Test func allowingPrivateNetworksLetsTheSameJobsComplete() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { origin in
            try await withOrigin(root: origin.path, recorder: recorder) { port in
                try await withTemporaryDirectory { directory in
                    try await JobServiceTests.withScheduler(
                        directory, store: InMemoryJobRepository(), client: Fetcher(policy: .allowAll)
                    ) { scheduler in
                        for host in ["127.0.0.1", "2130706433", "localhost"] {
                            let request = try JobServiceTests.request([
                                "url": "http://\(host):\(port)/testdata/256K", "filename": "\(host).bin",
                            ])
                            let id = try await scheduler.create(request).job.id
                            let done = try await JobServiceTests.waitFor(id, on: scheduler) { !$0.state.isLive }
                            #expect(done.state == .completed, "\(host): \(done.error?.message ?? "")")
                            #expect(JobServiceTests.holdsTestData(done, in: directory, size: 256 << 10))
                        }
                    }
                }
            }
        }
        #expect(!recorder.all.isEmpty)
    }
}
