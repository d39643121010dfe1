import DownloadEngine
import Foundation
import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// An edit of a running job (`PATCH /jobs/ID`, here `JobScheduler.edit`) on the real engine:
/// a link swapped for a fresh one keeps the bytes on disk when it serves the same file, and
/// a new priority, connection count, rate or header reaches the run. (The route's refusals
/// are `JobEditRefusalTests`, in process.)
@Suite struct NewLinkTests {
    static let size = 32 << 20

    /// A running job on a slow URL (4 MiB/s, one connection) with at least 8 MiB on disk:
    /// a quarter of the file, the rest 6 s away at the origin's pace, time enough for an edit
    /// to stop the run before it completes on a loaded machine.
    static func halfDone(_ runner: RunnerOnTheOrigin, seed: Int) async throws -> String {
        let id = try await runner.create(["url": runner.testdata("/testdata/32M?seed=\(seed)&rate=4M"), "connections": 1])
        try await runner.waitFor(id) { $0.bytesDone >= 8 << 20 }
        return id
    }

    @Test func aNewURLServingTheSameFileKeepsTheBytes() async throws {
        try await RunnerOnTheOrigin.with { runner in
            let id = try await Self.halfDone(runner, seed: 5)
            // The same file (same length, same ETag) at another URL, served at full speed.
            let edited = try await runner.edit(id, ["url": runner.testdata("/testdata/32M?seed=5&cut=0")])
            #expect(edited.url == runner.testdata("/testdata/32M?seed=5&cut=0"))
            let kept = edited.bytesDone
            #expect(kept >= 8 << 20)
            // The edit has stopped the first run: what the origin sends from here on is the new run's.
            let servedBefore = runner.bytesServed
            let done = try await runner.waitFor(id) { !$0.state.isLive }
            #expect(done.state == .completed)
            #expect(runner.holdsTestData(done, size: Self.size, seed: 5))
            // Nothing was fetched twice: the new URL sent only what was missing (a restart
            // would send the whole file), give or take what the old run had in flight.
            let served = runner.bytesServed - servedBefore
            #expect(served <= Int64(Self.size) - kept + (2 << 20), "\(served) bytes served after the edit, \(kept) were on disk")
        }
    }

    @Test func aNewURLServingAnotherFileRestartsOrWithKeepBytesIsRefused() async throws {
        try await RunnerOnTheOrigin.with { runner in
            let id = try await Self.halfDone(runner, seed: 6)
            let other = runner.testdata("/testdata/32M?seed=7")
            let refused = await runner.refusal { try await runner.edit(id, ["url": other, "keepBytes": true, "priority": 5]) }
            #expect(refused == "remote_changed")
            let unchanged = try #require(try await runner.scheduler.job(id: id))
            #expect(unchanged.url == runner.testdata("/testdata/32M?seed=6&rate=4M"))
            #expect(unchanged.priority == 0)

            _ = try await runner.edit(id, ["url": other])
            let done = try await runner.waitFor(id) { !$0.state.isLive }
            #expect(done.state == .completed)
            #expect(runner.holdsTestData(done, size: Self.size, seed: 7))
            #expect(runner.bytesServed >= Int64(Self.size + (8 << 20)))
        }
    }

    @Test func aRunningJobTakesNewPriorityConnectionsRateAndHeaders() async throws {
        try await RunnerOnTheOrigin.with { runner in
            let id = try await runner.create(["url": runner.testdata("/testdata/32M?rate=2M&seed=8"), "connections": 1])
            try await runner.waitFor(id) { $0.bytesDone > 0 }
            let job = try await runner.edit(
                id, ["priority": 7, "connections": 4, "limitRate": 64 << 20, "headers": ["X-Trace": "1"], "filename": "renamed.bin"])
            #expect(job.priority == 7)
            #expect(job.connections == 4)
            #expect(job.limitRate == 64 << 20)
            #expect(job.state == .running)
            #expect(
                try await waitUntil(.seconds(30), every: .milliseconds(20)) {
                    try await runner.scheduler.segments(id: id).filter(\.active).count > 1
                }, "four connections fetch")
            let done = try await runner.waitFor(id) { !$0.state.isLive }
            #expect(done.state == .completed)
            #expect(done.path == "renamed.bin")
            #expect(runner.holdsTestData(done, size: Self.size, seed: 8))
            let finished = try await runner.scheduler.segments(id: id)
            #expect(finished.count == 1)
            #expect(finished.first?.done == Int64(Self.size))
        }
    }

    /// While an edit waits for its probe, a second edit of the same job used to restart the
    /// stopped run under the old URL, and the first edit's new URL was then never used.
    @Test func aSecondEditWhileTheFirstWaitsIsRefused() async throws {
        try await RunnerOnTheOrigin.with { runner in
            let id = try await runner.create(["url": runner.testdata("/testdata/32M?seed=21&rate=4M"), "connections": 1])
            try await runner.waitFor(id) { $0.bytesDone >= 4 << 20 }
            // The same file at a URL that answers after 5 s: the first edit waits on its probe.
            let slow = runner.testdata("/testdata/32M?seed=21&delay=5000")
            async let first = runner.edit(id, ["url": slow])
            // Stopped by the first edit (no segment is fetched) while still `running`: the probe waits.
            #expect(
                try await waitUntil(.seconds(4), every: .milliseconds(20)) {
                    let segments = try await runner.scheduler.segments(id: id)
                    return !segments.isEmpty && segments.allSatisfy { !$0.active }
                }, "the first edit stopped the run")
            #expect(try await runner.scheduler.job(id: id)?.state == .running)
            #expect(await runner.refusal { try await runner.edit(id, ["priority": 3]) } == "invalid_transition")
            let edited = try await first
            #expect(edited.url == slow)
            #expect(edited.state == .running)
            let done = try await runner.waitFor(id) { !$0.state.isLive }
            #expect(done.state == .completed)
            #expect(runner.holdsTestData(done, size: 32 << 20, seed: 21))
        }
    }
}
