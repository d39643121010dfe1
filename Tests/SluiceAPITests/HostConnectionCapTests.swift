import Foundation
import NIOHTTP1
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 13: `--max-connections-per-host` holds across jobs, seen from the origin.
@Suite(.serialized) struct HostConnectionCapTests {
    @Test func threeJobsOfEightConnectionsNeverOpenMoreThanTheCap() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { root in
            try await withOrigin(root: root.path, recorder: recorder) { port in
                try await ServiceHarness.with(configure: { $0.maxConnectionsPerHost = 6 }) { service in
                    let queue = try await service.request(.GET, "/queue").json()
                    #expect(queue["maxConnectionsPerHost"] as? Int == 6)
                    // 16 MiB each at 8 MiB/s: about two seconds of overlap, eight segments each.
                    var ids: [String] = []
                    for seed in 1...3 {
                        let job = try await service.create([
                            "url": "http://127.0.0.1:\(port)/testdata/16M?seed=\(seed)", "connections": 8, "limitRate": 8 << 20,
                        ])
                        ids.append(job["id"] as! String)
                    }
                    let host = "127.0.0.1:\(port)"
                    // The queue shows the connections open to the origin, up to the cap.
                    try await service.eventually("GET /queue shows six connections to the origin") {
                        let queue = try await service.request(.GET, "/queue").json()
                        let open = (queue["connectionsPerHost"] as? [String: Any])?[host] as? Int ?? 0
                        #expect(open <= 6)
                        return open == 6
                    }
                    for (index, id) in ids.enumerated() {
                        let job = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
                        #expect(job["state"] as? String == "completed", "\(job["error"] ?? "")")
                        #expect(job["sha256"] as? String == ServiceHarness.expectedSHA256(size: 16 << 20, seed: UInt64(index + 1)))
                    }
                    #expect(recorder.maximumConcurrent <= 6, "the origin answered \(recorder.maximumConcurrent) requests at once")
                    // Once done, nothing is held.
                    try await service.eventually("no connection is counted after the jobs") {
                        let queue = try await service.request(.GET, "/queue").json()
                        return (queue["connectionsPerHost"] as? [String: Any])?.isEmpty == true
                    }
                }
            }
        }
    }
}
