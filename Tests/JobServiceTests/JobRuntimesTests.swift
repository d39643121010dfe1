@testable import JobService
import Testing

/// A job's runs as a table: an event on a job's slot → the slot after and what it returns.
@Suite struct JobRuntimesTests {
    struct TestRun: RunHandle, Equatable {
        let generation: Int
    }

    enum Kind: Equatable { case running, stopping, recording }

    static func kind(_ slots: JobRuntimes<TestRun>, _ id: String) -> (Kind, Int)? {
        switch slots.slot(id) {
        case .running(let run)?: (.running, run.generation)
        case .stopping(let run)?: (.stopping, run.generation)
        case .recording(let run)?: (.recording, run.generation)
        case nil: nil
        }
    }

    /// What the queue reads on every create and pass (runs, edits, ending runs) is kept as
    /// the runtimes change, not found by a pass over every job: with 200,000 paused jobs made
    /// here (each with a runtime until it first runs), each create took milliseconds and
    /// making them was quadratic (315 creates a second in a debug build, at 10,000 jobs).
    @Test func whatTheQueueReadsCostsTheJobsThatRunNotEveryJob() {
        var slots = JobRuntimes<TestRun>()
        for index in 0..<200_000 { slots["p\(index)"].neverRun = true }
        slots.start(TestRun(generation: 1), id: "a")
        slots.start(TestRun(generation: 1), id: "b")
        _ = slots.stop("b")
        slots["p7"].editing = true
        let start = ContinuousClock.now
        for _ in 0..<2_000 {
            #expect(slots.runningCount == 1)
            #expect(slots.editingIDs == ["p7"])
            #expect(slots.endingRuns == [TestRun(generation: 1)])
        }
        #expect(ContinuousClock.now - start < .seconds(2), "6,000 reads, each a pass over 200,000 jobs before (a billion steps)")
        // The indexes follow every change: an edit's end, a run's end, a removal.
        slots["p7"].editing = false
        #expect(slots.editingIDs.isEmpty)
        _ = slots.ended("b", generation: 1)
        slots.recorded("b", generation: 1)
        #expect(slots.endingRuns.isEmpty && slots.runningIDs == ["a"])
        _ = slots.remove("a")
        #expect(slots.runningCount == 0 && slots.runningIDs.isEmpty)
    }

    @Test func aRunThatEndsByItselfIsRecordingUntilItsEndIsRecorded() {
        var slots = JobRuntimes<TestRun>()
        slots.start(TestRun(generation: 1), id: "a")
        #expect(slots.runningCount == 1)
        #expect(slots.ending("a") == nil)
        #expect(slots.ended("a", generation: 1) == .own)
        // The window that CI hit: the run has left `running`, and a pause still finds it.
        #expect(Self.kind(slots, "a")! == (.recording, 1))
        #expect(slots.ending("a") == TestRun(generation: 1))
        #expect(slots.runningCount == 0, "its slot of the queue is free while it records")
        slots.recorded("a", generation: 1)
        #expect(slots.slot("a") == nil)
        #expect(slots.isEmpty)
    }

    @Test func aStoppedRunIsWaitedForAndItsEndIsItsOwnOnlyWhileNothingNewerRuns() {
        var slots = JobRuntimes<TestRun>()
        slots.start(TestRun(generation: 1), id: "a")
        #expect(slots.stop("a") == TestRun(generation: 1), "the run to cancel")
        #expect(slots.stop("a") == nil, "stopped once")
        #expect(Self.kind(slots, "a")! == (.stopping, 1))
        #expect(slots.ending("a") == TestRun(generation: 1))
        #expect(slots.ended("a", generation: 1) == .stopped)
        #expect(Self.kind(slots, "a")! == (.stopping, 1), "honoured, then recorded")
        slots.recorded("a", generation: 1)
        #expect(slots.isEmpty)
    }

    @Test func aNewerRunSupersedesTheOldOneAndKeepsItsSlot() {
        var slots = JobRuntimes<TestRun>()
        slots.start(TestRun(generation: 1), id: "a")
        _ = slots.stop("a")
        // A resume: the new run waits for the ending one, then takes the slot.
        #expect(slots.ending("a") == TestRun(generation: 1))
        slots.start(TestRun(generation: 2), id: "a")
        #expect(slots.ended("a", generation: 1) == .superseded)
        slots.recorded("a", generation: 1)
        #expect(Self.kind(slots, "a")! == (.running, 2), "an old run's end never clears a newer run")
        slots.recorded("a", generation: 2)
        #expect(Self.kind(slots, "a")! == (.running, 2), "a running run leaves only by ending")
        #expect(slots.runningIDs == ["a"])
    }

    @Test func aDeletedJobsRunEndsSuperseded() {
        var slots = JobRuntimes<TestRun>()
        slots.start(TestRun(generation: 3), id: "a")
        slots.start(TestRun(generation: 4), id: "b")
        _ = slots.stop("a")
        guard case .stopping(let removed)? = slots.remove("a") else {
            Issue.record("the stopping run is what a delete waits for")
            return
        }
        #expect(removed.generation == 3)
        #expect(slots.ended("a", generation: 3) == .superseded)
        #expect(slots.endingRuns.isEmpty)
        #expect(slots.runningCount == 1)
    }

    /// A job's runtime goes with its last field: nothing is kept for a job that has none.
    @Test func aRuntimeGoesWithItsLastField() {
        var runtimes = JobRuntimes<TestRun>()
        runtimes["a"].editing = true
        runtimes["a"].retryFailures = 2
        runtimes.start(TestRun(generation: 1), id: "a")
        runtimes["a"].editing = false
        runtimes["a"].retryFailures = nil
        #expect(!runtimes.isEmpty)
        _ = runtimes.stop("a")
        #expect(runtimes.ended("a", generation: 1) == .stopped)
        runtimes.recorded("a", generation: 1)
        #expect(runtimes.isEmpty)
        runtimes["b"].lease = Lease(jobID: "b", owner: "n1", epoch: 4)
        #expect(runtimes.leases.map(\.epoch) == [4])
        #expect(runtimes.takeLease("b")?.epoch == 4)
        #expect(runtimes.takeLease("b") == nil)
        #expect(runtimes.isEmpty)
    }
}
