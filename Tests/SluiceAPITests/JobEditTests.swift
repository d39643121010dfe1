import Foundation
import SluiceTestSupport
import Testing

/// `PATCH /jobs/ID`: a job changed while it waits or runs, a link swapped for a fresh one.
@Suite struct JobEditTests {
    static let size = 32 << 20

    /// A running job on a slow URL (4 MiB/s, one connection) with at least 8 MiB on disk:
    /// a quarter of the file, the rest 6 s away at the origin's pace: time enough
    /// for an edit to stop the run before it completes on a loaded machine (at 8 MiB/s, 3 s
    /// were not: the run completed first once in CI, and the edit was refused as too late).
    func halfDone(_ service: ServiceHarness, seed: Int) async throws -> String {
        let id =
            try await service.create(["url": service.testdata("/testdata/32M?seed=\(seed)&rate=4M"), "connections": 1])["id"] as! String
        try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) >= 8 << 20 }
        return id
    }

    @Test func aNewURLServingTheSameFileKeepsTheBytes() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let id = try await halfDone(service, seed: 5)
            // The same file (same length, same ETag) at another URL, served at full speed.
            let edited = try await service.send(.patch, "/jobs/\(id)", ["url": service.testdata("/testdata/32M?seed=5&cut=0")])
            #expect(edited.status == 200, "\(String(decoding: edited.body, as: UTF8.self))")
            #expect(try edited.json()["url"] as? String == service.testdata("/testdata/32M?seed=5&cut=0"))
            let kept = try edited.json()["bytesDone"] as? Int ?? 0
            #expect(kept >= 8 << 20)
            // The edit has stopped the first run: what the origin sends from here on is the new run's.
            let servedBefore = try await service.originBytesServed()
            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: Int64(Self.size), seed: 5))
            // Nothing was fetched twice: the new URL sent only what was missing (a restart
            // would send the whole file). The old run's bytes in flight when it stopped are
            // not counted here: under load they were over 4 MiB, and failed a bound on the
            // total.
            let served = try await service.originBytesServed() - servedBefore
            #expect(served <= Self.size - kept + (2 << 20), "\(served) bytes served after the edit, \(kept) were on disk")
        }
    }

    @Test func aNewURLServingAnotherFileRestartsOrWithKeepBytesIsRefused() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let id = try await halfDone(service, seed: 6)
            let other = service.testdata("/testdata/32M?seed=7")
            let refused = try await service.send(.patch, "/jobs/\(id)", ["url": other, "keepBytes": true, "priority": 5])
            #expect(refused.status == 409)
            #expect(refused.errorCode == "remote_changed")
            let unchanged = try await service.job(id)
            #expect(unchanged["url"] as? String == service.testdata("/testdata/32M?seed=6&rate=4M"))
            #expect(unchanged["priority"] as? Int == 0)

            let restarted = try await service.send(.patch, "/jobs/\(id)", ["url": other])
            #expect(restarted.status == 200)
            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: Int64(Self.size), seed: 7))
            #expect(try await service.originBytesServed() >= Self.size + (8 << 20))
        }
    }

    @Test func aRunningJobTakesNewPriorityConnectionsRateAndHeaders() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let id = try await service.create(["url": service.testdata("/testdata/32M?rate=2M&seed=8"), "connections": 1])["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > 0 }
            let edited = try await service.send(
                .patch, "/jobs/\(id)",
                ["priority": 7, "connections": 4, "limitRate": 64 << 20, "headers": ["X-Trace": "1"], "filename": "renamed.bin"]
            )
            #expect(edited.status == 200)
            let job = try edited.json()
            #expect(job["priority"] as? Int == 7)
            #expect(job["connections"] as? Int == 4)
            #expect(job["limitRate"] as? Int == 64 << 20)
            #expect(job["state"] as? String == "running")
            let segments = try await service.request(.GET, "/jobs/\(id)/segments")
            #expect(segments.status == 200)
            try await service.eventually("four connections fetch") {
                let list =
                    try JSONSerialization.jsonObject(with: try await service.request(.GET, "/jobs/\(id)/segments").body) as! [[String: Any]]
                return list.filter { $0["active"] as? Bool == true }.count > 1
            }
            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            #expect(done["path"] as? String == "renamed.bin")
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: Int64(Self.size), seed: 8))
            let finished =
                try JSONSerialization.jsonObject(with: try await service.request(.GET, "/jobs/\(id)/segments").body) as! [[String: Any]]
            #expect(finished.count == 1)
            #expect(finished.first?["done"] as? Int == Self.size)
        }
    }

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
            async let first = service.send(.patch, "/jobs/\(id)", ["url": slow])
            // Stopped by the first edit (no segment is fetched) while still `running`: the probe waits.
            try await service.eventually("the first edit stopped the run", timeout: .seconds(4)) {
                let segments =
                    try JSONSerialization.jsonObject(with: try await service.request(.GET, "/jobs/\(id)/segments").body) as! [[String: Any]]
                return !segments.isEmpty && segments.allSatisfy { $0["active"] as? Bool == false }
            }
            #expect(try await service.job(id)["state"] as? String == "running")
            let second = try await service.send(.patch, "/jobs/\(id)", ["priority": 3])
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
}
