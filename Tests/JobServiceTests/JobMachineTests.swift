@testable import DownloadEngine
import Foundation
@testable import JobService
import SluiceCore
import Testing

/// The job service's rules as event → action tables: the machine is given an event and what
/// it needs to know, and must answer with these actions, in this order. A single node and a
/// cluster node differ only by their claiming strategy.
@Suite struct JobMachineTests {
    typealias TestRun = JobRuntimesTests.TestRun
    typealias Action = JobAction<TestRun>

    static let now = Date(timeIntervalSince1970: 1_000_000)
    static let lease = Lease(jobID: "a", owner: "n1", epoch: 7)

    static func job(_ id: String, _ state: JobState, priority: Int = 0, bytes: Int64 = 0) -> JobSnapshot {
        var job = JobSnapshot(id: id, url: "http://origin.test/\(id)", state: state, connections: 4, priority: priority, createdAt: now)
        job.bytesDone = bytes
        return job
    }

    /// `job` as the machine records it after a lifecycle event: `state`, its run's fields
    /// cleared when it no longer runs, changed now.
    static func changed(_ job: JobSnapshot, to state: JobState) -> JobSnapshot {
        var job = job
        job.state = state
        if state != .queued { job.retryAt = nil }
        if state != .running {
            job.speed = 0
            job.eta = nil
            job.node = nil
        }
        job.updatedAt = now
        return job
    }

    static func machine(_ claiming: Claiming, running ids: [String] = [], lease: Lease? = nil) -> JobMachine<TestRun> {
        var machine = JobMachine<TestRun>(claiming: claiming)
        for (index, id) in ids.enumerated() {
            machine.started(TestRun(generation: index + 1), id: id)
            if let lease, lease.jobID == id { machine.runs[id].lease = lease }
        }
        return machine
    }

    // MARK: Lifecycle events

    enum Command: String, CaseIterable { case pause, resume }

    static func event(_ command: Command) -> (inout JobLifecycle) -> JobLifecycle.Action {
        switch command {
        case .pause: { $0.pauseRequested() }
        case .resume: { $0.resumeRequested() }
        }
    }

    /// State × command × strategy → the job's new state and the actions, in order. A
    /// cluster's write is fenced by the state it saw; a single node's is not.
    @Test(arguments: [
        // A running job's pause cancels its run first, then records it paused.
        (JobState.running, Command.pause, Claiming.own, JobState.paused, true, JobState?.none),
        (.running, .pause, .leased, .paused, true, .running),
        (.queued, .pause, .own, .paused, false, nil),
        (.failed, .pause, .leased, .paused, false, .failed),
        (.paused, .resume, .own, .queued, false, nil),
        (.failed, .resume, .leased, .queued, false, .failed),
    ])
    func lifecycleEvents(
        state: JobState, command: Command, claiming: Claiming, after: JobState, cancels: Bool, expected: JobState?
    ) throws {
        var machine = Self.machine(claiming, running: state == .running ? ["a"] : [])
        let before = Self.job("a", state)
        let (job, actions) = try machine.lifecycle(before, now: Self.now, Self.event(command))
        let recorded = Self.changed(before, to: after)
        #expect(job == recorded)
        let cancel: [Action] = cancels ? [.cancel(TestRun(generation: 1))] : []
        #expect(actions == cancel + [.record(recorded, expected: expected, tell: nil)])
        if cancels { #expect(machine.runs.ending("a") == TestRun(generation: 1), "the run is stopping until it ends") }
    }

    /// A command that changes nothing does nothing; one the lifecycle refuses throws and
    /// changes nothing.
    @Test func noOpsDoNothingAndRefusalsChangeNothing() throws {
        for claiming in [Claiming.own, .leased] {
            var machine = Self.machine(claiming)
            let (same, none) = try machine.lifecycle(Self.job("a", .paused), now: Self.now) { $0.pauseRequested() }
            #expect(same.state == .paused)
            #expect(none.isEmpty)
            #expect(throws: SluiceError.self) {
                try machine.lifecycle(Self.job("a", .completed), now: Self.now) { $0.resumeRequested() }
            }
            #expect(machine.runs.isEmpty)
        }
    }

    /// A user's command: a single node records it at once; a cluster node writes it first,
    /// fenced by the state it saw, and changes nothing here before the write is made.
    @Test func aClusterNodeWritesACommandFirstAndActsOnceItIsWritten() throws {
        var single = Self.machine(.own, running: ["a"])
        let running = Self.job("a", .running)
        let paused = Self.changed(running, to: .paused)
        let now = try single.command(running, now: Self.now, pendingWrite: false) { $0.pauseRequested() }
        #expect(now.actions == [.cancel(TestRun(generation: 1)), .record(paused, expected: nil, tell: nil)])
        #expect(now.storeFirst == nil)

        var cluster = Self.machine(.leased, running: ["a"])
        let first = try cluster.command(running, now: Self.now, pendingWrite: false) { $0.pauseRequested() }
        #expect(first.actions.isEmpty)
        #expect(first.storeFirst == .controlWrite(paused, expected: .running))
        #expect(cluster.runs.running("a") != nil, "nothing changes before the write")
        #expect(cluster.commandWritten(running, now: Self.now) { $0.pauseRequested() } == [.cancel(TestRun(generation: 1)), .show(paused)])

        // No change: nothing is written, unless this node has a change of the job to write.
        let queued = Self.job("b", .queued)
        let unchanged = try cluster.command(queued, now: Self.now, pendingWrite: false) { $0.resumeRequested() }
        #expect(unchanged.actions.isEmpty && unchanged.storeFirst == nil)
        #expect(
            try cluster.command(queued, now: Self.now, pendingWrite: true) { $0.resumeRequested() }.storeFirst
                == .controlWrite(queued, expected: .queued))
        #expect(throws: SluiceError.self) {
            try cluster.command(Self.job("c", .completed), now: Self.now, pendingWrite: true) { $0.pauseRequested() }
        }
    }

    /// A job made while a slot is free and nothing else is queued starts in its creation's
    /// write on a single node; a cluster node's is claimed like any other.
    @Test func aNewJobStartsAtOnceOnlyWhereItsQueueStartsItsOwnJobs() {
        let job = Self.job("n", .queued)
        let settings = QueueSettings(maxActive: 2)
        var single = Self.machine(.own, running: ["r"])
        #expect(single.startsAtOnce(job, queued: 0, held: 0, settings: settings))
        #expect(!single.startsAtOnce(job, queued: 1, held: 0, settings: settings), "a queued job may outrank it")
        #expect(!single.startsAtOnce(job, queued: 0, held: 1, settings: settings), "no slot free")
        #expect(!single.startsAtOnce(job, queued: 0, held: 0, settings: QueueSettings(paused: true, maxActive: 2)))
        #expect(!Self.machine(.leased).startsAtOnce(job, queued: 0, held: 0, settings: settings))

        let running = Self.started(job)
        #expect(single.created(running) == [.show(running), .start(running, claim: nil)])
        #expect(single.runs["n"].neverRun, "its run reads no checkpoint")
        #expect(single.created(Self.job("q", .queued)) == [.show(Self.job("q", .queued)), .schedule])
        #expect(single.created(Self.job("p", .paused)) == [.show(Self.job("p", .paused))])
        var cluster = Self.machine(.leased)
        _ = cluster.created(Self.job("q", .queued))
        #expect(!cluster.runs["q"].neverRun, "another node may run it first")
    }

    /// A deleted job's run stops and its runtime goes; the jobs waiting for it forget it when
    /// it had completed, and fail when it had not.
    @Test func aDeletedJobsDependentsForgetItOrFail() {
        var waiting = Self.job("w", .queued)
        waiting.after = ["a", "b"]
        var forgotten = waiting
        forgotten.after = ["b"]
        for claiming in Claiming.allCases {
            let fence = claiming == .leased ? JobState.queued : nil
            var machine = Self.machine(claiming)
            #expect(
                machine.deleted(Self.job("a", .completed), dependents: [waiting]).actions == [
                    .record(forgotten, expected: fence, tell: nil), .schedule,
                ])

            var running = Self.machine(claiming, running: ["a"])
            let (run, actions) = running.deleted(Self.job("a", .running), dependents: [waiting])
            #expect(run == TestRun(generation: 1), "the stopped run, to wait for")
            #expect(
                actions == [
                    .cancel(TestRun(generation: 1)), .failDependents(of: "a", reason: "dependency a was deleted before it completed"),
                    .schedule,
                ])
            #expect(running.runs.isEmpty)
        }
    }

    // MARK: Free slots

    static func candidates(_ jobs: [JobSnapshot]) -> [QueuePlan.Candidate] {
        jobs.enumerated().map { QueuePlan.Candidate(id: $1.id, priority: $1.priority, sequence: $0) }
    }

    static func started(_ job: JobSnapshot) -> JobSnapshot {
        var job = job
        job.state = .running
        job.retryAt = nil
        return job
    }

    /// A single node starts the ready jobs itself, highest priority then oldest, as many as
    /// slots are free: each recorded `running`, then started.
    @Test func aSingleNodeStartsTheReadyJobsItChooses() {
        var machine = Self.machine(.own, running: ["r"])
        let ready = [Self.job("old", .queued), Self.job("urgent", .queued, priority: 5), Self.job("young", .queued)]
        let table = Dictionary(uniqueKeysWithValues: ready.map { ($0.id, $0) })
        let actions = machine.slotsFree(
            settings: QueueSettings(maxActive: 3), running: Self.candidates([Self.job("r", .running)]), held: 0,
            ready: Self.candidates(ready), now: Self.now, job: { table[$0] }
        )
        let urgent = Self.started(table["urgent"]!)
        let old = Self.started(table["old"]!)
        #expect(
            actions == [
                .record(urgent, expected: nil, tell: nil), .start(urgent, claim: nil), .record(old, expected: nil, tell: nil),
                .start(old, claim: nil),
            ])
    }

    /// A cluster node claims as many as slots are free, whichever jobs it knows of look ready:
    /// the store decides which.
    @Test func aClusterNodeClaimsItsFreeSlots() {
        var machine = Self.machine(.leased, running: ["r"])
        let ready = [Self.job("a", .queued), Self.job("b", .queued)]
        let actions = machine.slotsFree(
            settings: QueueSettings(maxActive: 4), running: Self.candidates([Self.job("r", .running)]), held: 1,
            ready: Self.candidates(ready), now: Self.now, job: { id in ready.first { $0.id == id } }
        )
        #expect(actions == [.claim(2)])
    }

    /// Nothing starts or is claimed with no slot free, a paused queue, or nothing ready.
    @Test(arguments: Claiming.allCases)
    func nothingStartsWithoutAFreeSlotAReadyJobOrWithThePausedQueue(claiming: Claiming) {
        let ready = Self.candidates([Self.job("a", .queued)])
        let job = { (id: String) in Self.job(id, .queued) }
        var full = Self.machine(claiming, running: ["r"])
        #expect(full.slotsFree(settings: QueueSettings(maxActive: 2), running: [], held: 1, ready: ready, now: Self.now, job: job).isEmpty)
        var paused = Self.machine(claiming)
        let pausedQueue = QueueSettings(paused: true, maxActive: 2)
        #expect(paused.slotsFree(settings: pausedQueue, running: [], held: 0, ready: ready, now: Self.now, job: job).isEmpty)
        var idle = Self.machine(claiming)
        #expect(idle.slotsFree(settings: QueueSettings(maxActive: 2), running: [], held: 0, ready: [], now: Self.now, job: job).isEmpty)
    }

    /// More running than `maxActive` allows: the lowest priority, then the youngest, is sent
    /// back (its run cancelled, it is recorded queued), and nothing starts.
    @Test(arguments: Claiming.allCases)
    func runsOverTheLimitAreSentBack(claiming: Claiming) {
        let running = [Self.job("a", .running, priority: 1), Self.job("b", .running), Self.job("c", .running)]
        var machine = Self.machine(claiming, running: running.map(\.id))
        let actions = machine.slotsFree(
            settings: QueueSettings(maxActive: 1), running: Self.candidates(running), held: 0,
            ready: Self.candidates([Self.job("q", .queued)]), now: Self.now, job: { id in running.first { $0.id == id } }
        )
        let fence = claiming == .leased ? JobState.running : nil
        #expect(
            actions == [
                .note("job c goes back to the queue: the queue allows 1 running jobs"), .cancel(TestRun(generation: 3)),
                .record(Self.changed(running[2], to: .queued), expected: fence, tell: nil),
                .note("job b goes back to the queue: the queue allows 1 running jobs"), .cancel(TestRun(generation: 2)),
                .record(Self.changed(running[1], to: .queued), expected: fence, tell: nil),
            ])
        #expect(machine.runs.runningIDs == ["a"])
    }

    // MARK: A run's end

    /// How a run's task ended × whether it is the job's current run → how its end is taken.
    @Test func aRunsEndIsTheJobsOnlyWhileNothingNewerRuns() {
        var machine = Self.machine(.own, running: ["a"])
        #expect(machine.runEnded(id: "a", generation: 1, outcome: .placed, job: Self.job("a", .running)) == (.record, []))
        #expect(machine.recorded(id: "a", generation: 1) == [.letGo("a")])
        #expect(machine.runs.slot("a") == nil)

        // Stopped by a pause: nothing to record, its lease goes; unless it placed its file
        // before the stop reached it.
        var stopped = Self.machine(.own, running: ["a", "b"])
        _ = stopped.runs.stop("a")
        _ = stopped.runs.stop("b")
        #expect(
            stopped.runEnded(id: "a", generation: 1, outcome: .stopped, job: Self.job("a", .paused)) == (.nothing, [.releaseLease("a")]))
        #expect(stopped.runEnded(id: "b", generation: 2, outcome: .placed, job: Self.job("b", .paused)) == (.record, []))

        // A newer run took the job over: it takes the result, and holds the lease.
        var superseded = Self.machine(.leased, running: ["a"])
        _ = superseded.runs.stop("a")
        superseded.started(TestRun(generation: 2), id: "a")
        #expect(superseded.runEnded(id: "a", generation: 1, outcome: .placed, job: Self.job("a", .running)) == (.superseded, []))
        // The job was deleted: any lease left goes.
        var deleted = Self.machine(.leased)
        #expect(deleted.runEnded(id: "a", generation: 1, outcome: .stopped, job: nil) == (.superseded, [.releaseLease("a")]))
    }

    /// A run that placed its file makes its job completed before the store has the end: a
    /// command while the end is recorded is refused at once, on either node, as it would
    /// be once recorded (a cluster's pause waited on the record and, past its budget,
    /// answered `paused` for a job then recorded `completed`).
    @Test(arguments: Claiming.allCases)
    func aCommandWhileAPlacedFileIsRecordedIsRefusedAtOnce(claiming: Claiming) throws {
        var machine = Self.machine(claiming, running: ["a", "b"])
        _ = machine.runEnded(id: "a", generation: 1, outcome: .placed, job: Self.job("a", .running))
        _ = machine.runEnded(id: "b", generation: 2, outcome: .retryLater(delay: .seconds(5), failures: 1), job: Self.job("b", .running))
        for command in Command.allCases {
            #expect(throws: SluiceError.self) {
                try machine.command(Self.job("a", .running), now: Self.now, pendingWrite: false, Self.event(command))
            }
        }
        // A run that ended otherwise still takes a pause (the record keeps it).
        #expect(try machine.command(Self.job("b", .running), now: Self.now, pendingWrite: false, Self.event(.pause)).0.state == .paused)
        // Recorded: the rule is the job's state's again.
        _ = machine.recorded(id: "a", generation: 1)
        #expect(!machine.runs["a"].placedFile)
    }

    static let placed = DownloadResult(path: "/docs/file.bin", fileName: "file.bin", sha256: "ab", bytes: 1000)

    static func completed(_ job: JobSnapshot) -> JobSnapshot {
        var job = job
        job.state = .completed
        job.path = "file.bin"
        job.filename = "file.bin"
        job.sha256 = "ab"
        job.bytesDone = 1000
        job.bytesTotal = 1000
        job.completedAt = now
        job.updatedAt = now
        job.speed = 0
        return job
    }

    /// A single node records a run's end behind at once, with the webhook that tells it,
    /// then schedules and lets the finished job go once stored; a failure fails the jobs
    /// waiting for it first.
    @Test func aSingleNodeRecordsARunsEndBehind() {
        var machine = Self.machine(.own, running: ["a"])
        let running = Self.job("a", .running, bytes: 400)
        let (job, actions, _) = machine.endOfRun(running, outcome: .placed, result: Self.placed, now: Self.now, documentsDirectory: "/docs")
        #expect(job == Self.completed(running))
        #expect(actions == [.record(job, expected: nil, tell: .completed), .schedule, .letGo("a")])

        let broken = JobSnapshot.JobError(code: "http_status", message: "the remote answered 404")
        let (failed, failure, _) = machine.endOfRun(
            running, outcome: .failed(broken), result: nil, now: Self.now, documentsDirectory: "/docs")
        #expect(failed.state == .failed && failed.error == broken)
        #expect(
            failure == [
                .record(failed, expected: nil, tell: .failed), .failDependents(of: "a", reason: "dependency a failed"), .schedule,
                .letGo("a"),
            ])

        // Only the store failed: queued for 5 s, told to nobody, never failed.
        let (waiting, wait, _) = machine.endOfRun(
            running, outcome: .storeUnavailable, result: nil, now: Self.now, documentsDirectory: "/docs")
        #expect(waiting.state == .queued && waiting.retryAt == Self.now.addingTimeInterval(5))
        #expect(wait == [.record(waiting, expected: nil, tell: nil), .schedule, .letGo("a")])
    }

    /// The finished file's path is relative to the documents, compared byte by byte: a `dir`
    /// whose first part begins with a combining mark lost its directory (`hasPrefix` in
    /// characters), and a delete with its file then removed `documents/NAME`, another file.
    @Test func aPlacedFilesPathKeepsADirThatBeginsWithACombiningMark() {
        var machine = Self.machine(.own, running: ["a"])
        let placed = DownloadResult(path: "/docs/\u{308}x/file.bin", fileName: "file.bin", sha256: "ab", bytes: 1000)
        let (job, _, _) = machine.endOfRun(
            Self.job("a", .running), outcome: .placed, result: placed, now: Self.now, documentsDirectory: "/docs")
        #expect(job.path == "\u{308}x/file.bin")
    }

    /// A cluster node writes a run's end under its lease first (the lease is given up with
    /// it); what follows comes once the store took it (`endStored`).
    @Test func aClusterNodeWritesARunsEndUnderItsLeaseFirst() {
        var machine = Self.machine(.leased, running: ["a"], lease: Self.lease)
        let running = Self.job("a", .running)
        let (job, actions, storeFirst) = machine.endOfRun(
            running, outcome: .placed, result: Self.placed, now: Self.now, documentsDirectory: "/docs")
        #expect(actions.isEmpty)
        #expect(storeFirst == .finishRun(job, lease: Self.lease, tell: .completed))
        #expect(machine.runs["a"].lease == nil)
        #expect(machine.endStored(job) == [.schedule, .letGo("a")])
    }

    /// What follows the store's answer to a run's end written under its lease, as a table:
    /// (answer, the job as the table holds it now) → follow-up. `before` is the job when
    /// the write began.
    @Test func whatFollowsARunsEndWrittenUnderItsLease() {
        let machine = Self.machine(.leased, running: ["a"], lease: Self.lease)
        let before = Self.job("a", .running)
        let finishing = Self.completed(before)
        let paused = Self.changed(before, to: .paused)
        let table: [(FinishAnswer, JobSnapshot?, FinishFollowUp<TestRun>)] = [
            // Deleted meanwhile: nothing to record or show, whatever the store said.
            (.recorded, nil, .nothing), (.takenBack, nil, .nothing), (.unavailable, nil, .nothing),
            // Recorded, nothing changed meanwhile: told, then shown (`endTold`).
            (.recorded, before, .recorded(tell: .completed)),
            // Recorded, but a command changed the job meanwhile: the store holds what won.
            (.recorded, paused, .readBack(takenBack: false)),
            // The lease was taken back: another node's outcome, read back.
            (.takenBack, before, .readBack(takenBack: true)), (.takenBack, paused, .readBack(takenBack: true)),
            // The store did not answer: shown ended, kept for the heartbeat to record.
            (.unavailable, before, .unrecorded([.keepUnrecorded(finishing, lease: Self.lease), .show(finishing), .schedule])),
            (.unavailable, paused, .unrecorded([.keepUnrecorded(finishing, lease: Self.lease), .show(finishing), .schedule])),
        ]
        for (answer, now, expected) in table {
            let followUp = machine.finishAnswered(
                answer, finishing: finishing, lease: Self.lease, tell: .completed, before: before, now: now)
            #expect(followUp == expected, "\(answer), now \(now?.state.rawValue ?? "deleted")")
        }
        var told = machine
        #expect(told.endTold(finishing, present: true) == [.show(finishing), .schedule, .letGo("a")])
        #expect(told.endTold(finishing, present: false).isEmpty)
    }

    /// A late end changes nothing: a finished job's lease goes; a lost lease is forgotten.
    @Test func lateEndsChangeNothing() {
        var machine = Self.machine(.leased, running: ["a"], lease: Self.lease)
        let done = Self.job("a", .completed)
        let (same, actions, _) = machine.endOfRun(done, outcome: .placed, result: Self.placed, now: Self.now, documentsDirectory: "/docs")
        #expect(same == done)
        #expect(actions == [.releaseLease("a")])
        let (_, lost, _) = machine.endOfRun(
            Self.job("a", .running), outcome: .leaseLost, result: nil, now: Self.now, documentsDirectory: "/docs")
        #expect(lost.isEmpty)
        #expect(machine.runs["a"].lease == nil)
    }

    // MARK: A cluster node's claims and the store's changes

    /// A claim: the job is shown as this node's and started under its lease; a run of it
    /// still here (rescued from this node, claimed again before it heard) stops first.
    @Test func aClaimedJobStartsUnderItsLeaseAfterAnyRunOfItHere() {
        var machine = Self.machine(.leased, running: ["a"])
        let claim = ClaimedJob(job: Self.job("a", .running), lease: Self.lease, lastOwner: "n2")
        var shown = claim.job
        shown.node = "n1"
        #expect(machine.claimed(claim, nodeName: "n1") == [.cancel(TestRun(generation: 1)), .show(shown), .start(shown, claim: claim)])
        #expect(machine.runs["a"].lease == Self.lease)
    }

    /// A refused lease stops its run at once; a lease not held (an older one) changes nothing.
    @Test func aLostLeaseStopsItsRunOnlyWhileItIsTheOneHeld() {
        var machine = Self.machine(.leased, running: ["a"], lease: Self.lease)
        #expect(machine.leaseLost(id: "a", epoch: 6) == nil)
        #expect(machine.runs.running("a") != nil)
        #expect(machine.leaseLost(id: "a", epoch: 7) == [.cancel(TestRun(generation: 1))])
        #expect(machine.runs["a"].lease == nil)
        #expect(machine.leaseLost(id: "a", epoch: 7) == nil, "lost once")
    }

    static func row(_ local: JobSnapshot, _ change: (inout JobSnapshot) -> Void) -> JobSnapshot {
        var row = local
        change(&row)
        return row
    }

    /// A row of a job running here: the run goes on while the row says it runs here (its
    /// own progress kept, a new rate applied), stops when the row says otherwise, and goes
    /// back to the queue when the job was edited elsewhere.
    @Test func aStoreRowOfAJobRunningHere() {
        var local = Self.job("a", .running, bytes: 500)
        local.node = "n1"
        // Still ours, with a new rate: the local progress stays, the limiter takes the rate.
        var machine = Self.machine(.leased, running: ["a"], lease: Self.lease)
        let rated = Self.row(local) {
            $0.bytesDone = 100
            $0.limitRate = 1000
        }
        var expected = rated
        expected.bytesDone = 500
        #expect(
            machine.storeChanged(rated, local: local, nodeName: "n1", now: Self.now) == [.setRate("a", 1000), .show(expected), .letGo("a")])
        #expect(machine.runs.running("a") != nil)

        // Paused on another node: the run stops, the row is shown.
        let paused = Self.row(local) { $0.state = .paused }
        #expect(
            machine.storeChanged(paused, local: local, nodeName: "n1", now: Self.now) == [
                .cancel(TestRun(generation: 1)), .show(paused), .letGo("a"),
            ])

        // Edited elsewhere under the run: kept, then sent back (fenced by `running`).
        var edited = Self.machine(.leased, running: ["a"], lease: Self.lease)
        let moved = Self.row(local) { $0.url = "http://origin.test/elsewhere" }
        #expect(
            edited.storeChanged(moved, local: local, nodeName: "n1", now: Self.now) == [
                .keep(moved), .note("job a goes back to the queue: it was edited on another node"), .cancel(TestRun(generation: 1)),
                .record(Self.changed(moved, to: .queued), expected: .running, tell: nil), .letGo("a"),
            ])
    }

    /// A row of a job not running here is taken as it is; a finished one is marked shown
    /// (the feed's overlap brings it again) and its runtime goes; the same row changes nothing.
    @Test func aStoreRowOfAJobNotRunningHere() {
        var machine = Self.machine(.leased)
        let local = Self.job("a", .queued)
        machine.runs["a"].retryFailures = 2
        let done = Self.row(local) { $0.state = .completed }
        #expect(machine.storeChanged(done, local: local, nodeName: "n1", now: Self.now) == [.show(done), .shownEnd(done), .letGo("a")])
        #expect(machine.runs.isEmpty)
        #expect(machine.storeChanged(local, local: local, nodeName: "n1", now: Self.now) == [.letGo("a")])
    }

    // MARK: Progress, letting go, edits

    /// At most one progress event per job every 250 ms; a stopped or superseded run's
    /// progress is dropped.
    @Test func progressIsShownAtMostFourTimesASecond() {
        var machine = Self.machine(.own, running: ["a"])
        let start = ContinuousClock.now
        let takes = [
            machine.progressed(id: "a", generation: 1, now: start),
            machine.progressed(id: "a", generation: 1, now: start + .milliseconds(100)),
            machine.progressed(id: "a", generation: 1, now: start + .milliseconds(250)),
            machine.progressed(id: "a", generation: 2, now: start + .seconds(1)),
        ]
        #expect(takes == [.publish, .keep, .publish, .ignore])
        _ = machine.runs.stop("a")
        let stopped = machine.progressed(id: "a", generation: 1, now: start + .seconds(2))
        #expect(stopped == .ignore)
    }

    /// A finished job leaves the table once its state is stored and nothing holds it: not a
    /// run, a lease, an edit or a command. Its runtime goes with it.
    @Test func aFinishedJobGoesOnlyOnceStoredAndUnheld() {
        var machine = Self.machine(.leased)
        let done = Self.job("a", .completed)
        let live = machine.letGo(Self.job("a", .paused), stored: true)
        let unstored = machine.letGo(done, stored: false)
        machine.runs["a"].holds = 1
        let held = machine.letGo(done, stored: true)
        machine.runs["a"].holds = 0
        machine.runs["a"].lease = Self.lease
        let leased = machine.letGo(done, stored: true)
        machine.runs["a"].lease = nil
        machine.runs["a"].retryFailures = 1
        let free = machine.letGo(done, stored: true)
        // A live job stays; one not stored yet, held by a command or by its lease, too.
        #expect([live, unstored, held, leased, free] == [false, false, false, false, true])
        #expect(machine.runs.isEmpty)
    }

    /// An edit that stopped a run: it starts again, or goes back to the queue when the job
    /// must now wait for others; a cluster node that lost the lease meanwhile leaves it.
    @Test func anEditsStoppedRunGoesOnOrWaits() {
        let running = Self.job("a", .running)
        var machine = Self.machine(.own, running: ["a"])
        machine.runs["a"].editing = true
        _ = machine.runs.stop("a")
        machine.runs.recorded("a", generation: 1)
        let restart = machine.editEnded(running, id: "a", dependenciesComplete: true)
        #expect(restart == [.start(running, claim: nil), .schedule])
        #expect(!machine.runs["a"].editing)
        var queued = running
        queued.state = .queued
        let requeue = machine.editEnded(running, id: "a", dependenciesComplete: false)
        #expect(requeue == [.record(queued, expected: nil, tell: nil), .schedule])
        var cluster = Self.machine(.leased)
        let unleased = cluster.editEnded(running, id: "a", dependenciesComplete: true)
        #expect(unleased == [.schedule], "no lease: another node's to run")
        let deleted = cluster.editEnded(nil, id: "a", dependenciesComplete: true)
        #expect(deleted == [.schedule], "deleted meanwhile")
    }

    // MARK: Dependencies

    /// A failed dependency fails the queued jobs waiting for it, then those waiting for them,
    /// each told by its `failed` webhook; a paused one is left (a resume waits again), and
    /// nothing past it fails.
    @Test(arguments: Claiming.allCases)
    func aFailedDependencyFailsTheQueuedChainBelowIt(claiming: Claiming) {
        func waiting(_ id: String, _ state: JobState, for dependency: String) -> JobSnapshot {
            var job = Self.job(id, state)
            job.after = [dependency, "done"]
            job.waitingFor = [dependency]
            return job
        }
        let chain = [
            waiting("b", .queued, for: "a"), waiting("c", .queued, for: "b"), waiting("p", .paused, for: "a"),
            waiting("q", .queued, for: "p"),
        ]
        let states: [String: JobState] = ["a": .failed, "done": .completed]
        let machine = Self.machine(claiming)
        let actions = machine.dependencyFailed(
            [.init(id: "b", reason: "dependency a failed"), .init(id: "p", reason: "dependency a failed")], withDependencies: chain,
            now: Self.now, state: { states[$0] }
        )
        func failed(_ job: JobSnapshot, _ reason: String) -> JobSnapshot {
            var job = job
            job.state = .failed
            job.waitingFor = job.after.filter { $0 != "done" }
            job.error = .init(code: "dependency_failed", message: reason)
            return job
        }
        let fence = claiming == .leased ? JobState.queued : nil
        #expect(
            actions == [
                .note("job b fails: dependency a failed"), .record(failed(chain[0], "dependency a failed"), expected: fence, tell: .failed),
                .note("job c fails: dependency b failed"), .record(failed(chain[1], "dependency b failed"), expected: fence, tell: .failed),
            ])
    }

    /// `waitingFor` kept up to date before the queue looks; a queued job whose dependency is
    /// gone fails (a single node knows every job), or first asks the store (a cluster node:
    /// another node may have finished it) unless the store has said it is gone.
    @Test func dependenciesAreSettledBeforeTheQueueLooks() {
        var job = Self.job("w", .queued)
        job.after = ["done", "busy"]
        job.waitingFor = ["done", "busy"]
        let states: [String: JobState] = ["done": .completed, "busy": .running]
        var waiting = job
        waiting.waitingFor = ["busy"]
        for claiming in Claiming.allCases {
            let machine = Self.machine(claiming)
            let fence = claiming == .leased ? JobState.queued : nil
            #expect(
                machine.dependenciesSettled(job, state: { states[$0] }, gone: { _ in false }) == [
                    .record(waiting, expected: fence, tell: nil)
                ])
            #expect(machine.dependenciesSettled(waiting, state: { states[$0] }, gone: { _ in false }).isEmpty, "nothing changed")
            var running = waiting
            running.state = .running
            var runs = running
            runs.waitingFor = []
            #expect(
                machine.dependenciesSettled(running, state: { states[$0] }, gone: { _ in false })
                    == [.record(runs, expected: claiming == .leased ? .running : nil, tell: nil)])
        }
        var orphan = Self.job("o", .queued)
        orphan.after = ["gone"]
        orphan.waitingFor = ["gone"]
        let failure = JobAction<TestRun>.failCascade(from: "o", reason: "dependency gone was deleted before it completed")
        #expect(Self.machine(.own).dependenciesSettled(orphan, state: { _ in nil }, gone: { _ in false }) == [failure])
        #expect(Self.machine(.leased).dependenciesSettled(orphan, state: { _ in nil }, gone: { _ in false }) == [.askStore(["gone"])])
        #expect(Self.machine(.leased).dependenciesSettled(orphan, state: { _ in nil }, gone: { _ in true }) == [failure])
    }
}
