import Testing

@testable import SluiceCore

/// CONTRACT.md §4, §7 "Disk": under the floor nothing starts; a job that met a full disk goes
/// on once the space above the floor has grown since.
@Suite struct DiskWatchTests {
    static let mib: Int64 = 1 << 20

    @Test func underTheFloorIsLowAndAJobWaitsForTheSpaceToGrow() {
        var watch = DiskWatch()
        var seen = watch.observe(available: 100 * Self.mib, floor: 64 * Self.mib)
        #expect(!watch.low && seen.released.isEmpty && !seen.changed)
        // A job met the shortage with 36 MiB usable: it waits for more than that.
        watch.wait("big", floor: 64 * Self.mib)
        #expect(watch.waiting["big"] == 36 * Self.mib)
        seen = watch.observe(available: 100 * Self.mib, floor: 64 * Self.mib)
        #expect(seen.released.isEmpty, "the same space: it would not fit again")
        // Under the floor: low, nothing released.
        seen = watch.observe(available: 10 * Self.mib, floor: 64 * Self.mib)
        #expect(watch.low && seen.changed && seen.released.isEmpty)
        // Back, but only to where it was: still waiting; then more: it goes on.
        seen = watch.observe(available: 100 * Self.mib, floor: 64 * Self.mib)
        #expect(!watch.low && seen.changed && seen.released.isEmpty)
        seen = watch.observe(available: 101 * Self.mib, floor: 64 * Self.mib)
        #expect(seen.released == ["big"] && watch.waiting.isEmpty)
        // One forgotten (paused, deleted) is never released.
        watch.wait("gone", floor: 64 * Self.mib)
        watch.forget("gone")
        #expect(watch.observe(available: 500 * Self.mib, floor: 64 * Self.mib).released.isEmpty)
    }

    @Test func heldByNamesTheDiskBeforeTheWindowAndAdmitsNothingWhileLow() {
        let job = JobSnapshot(id: "j", url: "http://example.com/x", state: .queued, connections: 1, priority: 0, createdAt: .now)
        var ignoring = job
        ignoring.ignoreSchedule = true
        let low = QueueHolds(windowClosed: true, diskLow: true)
        #expect(low.heldBy(job, now: .now) == .disk)
        #expect(!low.admits(ignoring), "a full disk holds even the jobs that ignore the schedule")
        let waiting = QueueHolds(diskWaiting: ["j"])
        #expect(waiting.heldBy(job, now: .now) == .disk)
        #expect(!waiting.admits(job))
        #expect(QueueHolds(diskWaiting: ["other"]).admits(job))
    }

    /// What `schedule()` reads of the ready queue under each hold: nothing when nothing may
    /// start, all of it for the jobs that ignore a closed window, past the ones waiting for space.
    @Test(arguments: [
        (QueueHolds(), 3, 3), (QueueHolds(diskLow: true), 3, 0), (QueueHolds(quotaReached: true), 3, 0),
        (QueueHolds(windowClosed: true), 3, Int.max), (QueueHolds(windowClosed: true, diskLow: true), 3, 0),
        (QueueHolds(diskWaiting: ["a", "b"]), 3, 5),
    ])
    func theQueueReadsOnlyWhatItsHoldsCanLetStart(holds: QueueHolds, wanted: Int, expected: Int) {
        #expect(holds.readLimit(wanted: wanted) == expected)
    }
}
