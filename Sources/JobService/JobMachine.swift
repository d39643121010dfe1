import DownloadEngine
import Foundation
import SluiceCore

/// The job service's decisions, in a value: every job's runtime on this node (`JobRuntimes`)
/// and the rules that change it. Its `mutating` functions take an event (a lifecycle event
/// on a job, free slots, a run's end, its end stored) with what it needs to know, change the
/// runtimes, and return the actions that follow (`JobAction`); the scheduler runs them. As in
/// AsyncHTTPClient's connection pool: decide in a value, act outside it.
///
/// A single node and a cluster node differ here by their claiming strategy (`Claiming`)
/// only: whether a write is fenced by the state the store holds, whether free slots start
/// jobs or claim them, whether a run's end is written under its lease first.
struct JobMachine<Run: RunHandle> {
    typealias Action = JobAction<Run>

    let claiming: Claiming
    /// Every job's runtime on this node.
    var runs = JobRuntimes<Run>()

    init(claiming: Claiming) {
        self.claiming = claiming
    }

    // MARK: Lifecycle events

    /// A lifecycle event on `job` (a user's pause or resume, the queue's send back): the job
    /// after it, and what to do. A refused event throws `invalid_transition` and changes
    /// nothing.
    mutating func lifecycle(
        _ job: JobSnapshot, now: Date, _ event: (inout JobLifecycle) -> JobLifecycle.Action
    ) throws -> (JobSnapshot, [Action]) {
        let (after, action) = try Self.decide(job, event, now: now)
        var actions: [Action] = []
        if case .stopDownload = action, let run = runs.stop(job.id) { actions.append(.cancel(run)) }
        if after.state != job.state { actions.append(.record(after, expected: fenced(job.state), tell: nil)) }
        return (after, actions)
    }

    /// A user's command on `job` (a pause, a resume). A single node decides and records it at
    /// once (`lifecycle`). A cluster node writes it first (`controlWrite`), when it changes the
    /// job or this node has a change of the job still to write (`pendingWrite`), and acts
    /// once the write is made (`commandWritten`): nothing changes here before.
    mutating func command(
        _ job: JobSnapshot, now: Date, pendingWrite: Bool, _ event: (inout JobLifecycle) -> JobLifecycle.Action
    ) throws -> (job: JobSnapshot, actions: [Action], storeFirst: StoreFirst?) {
        // Its file is placed: completed, though the store may not have taken the end yet (a
        // cluster node waits on it). Answered as the record will, not after a wait.
        if runs[job.id].placedFile {
            throw SluiceError(.invalidTransition, "job \(job.id) is completed: its file is placed")
        }
        guard claiming.writesCommandsFirst else {
            let (after, actions) = try lifecycle(job, now: now, event)
            return (after, actions, nil)
        }
        let (after, _) = try Self.decide(job, event, now: now)
        guard after.state != job.state || pendingWrite else { return (after, [], nil) }
        return (after, [], .controlWrite(after, expected: job.state))
    }

    /// A command's control write is made: its run stops, the job is shown as written.
    mutating func commandWritten(_ before: JobSnapshot, now: Date, _ event: (inout JobLifecycle) -> JobLifecycle.Action) -> [Action] {
        guard let (after, action) = try? Self.decide(before, event, now: now) else { return [] }
        var actions: [Action] = []
        if case .stopDownload = action, let run = runs.stop(before.id) { actions.append(.cancel(run)) }
        if after.state != before.state { actions.append(.show(after)) }
        return actions
    }

    /// The job after `event`, and what `JobLifecycle` says to do: a pure decision.
    static func decide(
        _ job: JobSnapshot, _ event: (inout JobLifecycle) -> JobLifecycle.Action, now: Date
    ) throws -> (JobSnapshot, JobLifecycle.Action) {
        var job = job
        var lifecycle = JobLifecycle(state: job.state)
        let action = event(&lifecycle)
        if case .reject(let message) = action { throw SluiceError(.invalidTransition, message) }
        if job.state != lifecycle.state {
            job.state = lifecycle.state
            if job.state != .queued { job.retryAt = nil }
            if job.state != .running {
                job.speed = 0
                job.eta = nil
                job.node = nil
            }
            job.updatedAt = now
        }
        return (job, action)
    }

    /// The state a write of this node expects the store to hold: the one it saw, in a
    /// cluster (another node may have changed the job); none on a single node.
    func fenced(_ seen: JobState?) -> JobState? {
        claiming == .leased ? seen : nil
    }

    // MARK: Creation and removal

    /// Whether a new job would be the one the queue starts next, at once: queued, waiting
    /// for nothing, on a node whose queue starts its own jobs, with a slot free (`held`
    /// slots kept) and no other job queued (a queued one may outrank it). Such a job is
    /// stored running by its creation's write.
    func startsAtOnce(_ job: JobSnapshot, queued: Int, held: Int, settings: QueueSettings) -> Bool {
        claiming.startsInItsCreation && job.state == .queued && job.waitingFor.isEmpty && !settings.paused && queued == 0
            && runs.runningCount + held < settings.maxActive
    }

    /// A job is made, its row stored: shown, then started at once when its creation stored
    /// it running, else offered to the queue.
    mutating func created(_ job: JobSnapshot) -> [Action] {
        // Made here and not run yet: its run reads no checkpoint (unless another node may
        // claim and run it first).
        if claiming.knowsItsNewJobs { runs[job.id].neverRun = true }
        switch job.state {
        case .running: return [.show(job), .start(job, claim: nil)]
        case .queued: return [.show(job), .schedule]
        default: return [.show(job)]
        }
    }

    /// A job is deleted, its row and its `removed` delivery stored: its run stops and
    /// everything kept about it goes (the run is returned, to wait for: it may have placed
    /// its file). A completed dependency has done its part, so the jobs that waited for it
    /// forget it; one deleted before completing fails the queued jobs waiting for it.
    mutating func deleted(_ job: JobSnapshot, dependents: [JobSnapshot]) -> (run: Run?, actions: [Action]) {
        var actions: [Action] = []
        var lifecycle = JobLifecycle(state: job.state)
        if case .remove(stopFirst: true) = lifecycle.deleteRequested(), let run = runs.stop(job.id) { actions.append(.cancel(run)) }
        let run = runs.remove(job.id)?.run
        switch DependencyCascade.removal(of: job.id, state: job.state) {
        case .forget:
            for var waiting in dependents {
                let seen = waiting.state
                waiting.after.removeAll { $0 == job.id }
                actions.append(.record(waiting, expected: fenced(seen), tell: nil))
            }
        case .fail(let reason):
            if !dependents.isEmpty { actions.append(.failDependents(of: job.id, reason: reason)) }
        }
        return (run, actions + [.schedule])
    }

    // MARK: Dependencies

    /// Brings a job's `waitingFor` up to date, before the queue looks (`settleDependencies`):
    /// a running or completed job waits for nothing; any other waits for those of `after`
    /// that have not completed. A queued job one of whose dependencies is gone can never
    /// start: it fails, and the jobs waiting for it. A dependency this node does not know is
    /// gone on a single node (it holds every live job and the states of the finished ones
    /// live jobs wait for); on a cluster node it may have finished elsewhere before this node
    /// heard of the job, so the store is asked first (unless it said so already, `gone`),
    /// and the job waits meanwhile.
    func dependenciesSettled(_ job: JobSnapshot, state: (String) -> JobState?, gone: (String) -> Bool) -> [Action] {
        guard !job.after.isEmpty || !job.waitingFor.isEmpty else { return [] }
        var settled = job
        var actions: [Action] = []
        switch job.state {
        case .running, .completed:
            settled.waitingFor = []
        case .queued, .paused, .failed:
            if job.state == .queued, case .failed(let missing, let reason) = JobDependencies.verdict(after: job.after, state: state) {
                guard claiming == .leased, !gone(missing) else { return [.failCascade(from: job.id, reason: reason)] }
                actions.append(.askStore(job.after))
            }
            settled.waitingFor = job.after.filter { state($0) != .completed }
        }
        if settled != job { actions.append(.record(settled, expected: fenced(job.state), tell: nil)) }
        return actions
    }

    /// Dependencies failed or went before completing (`starts`, in order): the queued jobs
    /// waiting for them fail with `dependency_failed`, told by their `failed` webhook, and in
    /// turn the queued jobs waiting for those, down the chain in one linear pass
    /// (`DependencyCascade`). `withDependencies` are the jobs that wait for any; `state` is a
    /// job's state (held, or a finished dependency's kept).
    func dependencyFailed(
        _ starts: [DependencyCascade.Step], withDependencies: [JobSnapshot], now: Date, state: (String) -> JobState?
    ) -> [Action] {
        guard !starts.isEmpty else { return [] }
        // Who waits for whom, read once; each job's snapshot by id.
        var dependents: [String: [String]] = [:]
        var byID: [String: JobSnapshot] = [:]
        for other in withDependencies {
            byID[other.id] = other
            for dependency in other.after { dependents[dependency, default: []].append(other.id) }
        }
        var actions: [Action] = []
        var cascade = DependencyCascade(starts: starts, dependents: dependents)
        while let step = cascade.next(state: { byID[$0]?.state ?? state($0) }), var job = byID[step.id] {
            let seen = job.state
            job.state = .failed
            job.retryAt = nil
            job.waitingFor = job.after.filter { state($0) != .completed }
            job.error = .init(code: SluiceError.Code.dependencyFailed.rawValue, message: step.reason)
            job.updatedAt = now
            // In a cluster every node may see the failure; the one whose write wins tells (the
            // deliveries are stored with the write, or not at all).
            actions += [.note("job \(step.id) fails: \(step.reason)"), .record(job, expected: fenced(seen), tell: .failed)]
            cascade.recorded(step.id)
        }
        return actions
    }

    // MARK: The queue

    /// What the queue does with its slots: sends back the running jobs over `maxActive`
    /// (lowest priority, then youngest), then fills the free slots from `ready` (highest
    /// priority, then oldest) — started here, or claimed from the store in a cluster.
    ///
    /// `running` are the running jobs' candidates, `held` the slots kept for runs an edit
    /// stopped and for creates under way, `job` reads a job's snapshot.
    mutating func slotsFree(
        settings: QueueSettings, sendBackReason: String? = nil, running: [QueuePlan.Candidate], held: Int, ready: [QueuePlan.Candidate],
        now: Date, job: (String) -> JobSnapshot?
    ) -> [Action] {
        var actions: [Action] = []
        for id in QueuePlan.preemptions(running: running, settings: settings) {
            guard let current = job(id) else { continue }
            actions += sendBack(current, now: now, reason: sendBackReason ?? "the queue allows \(settings.maxActive) running jobs")
        }
        let free = settings.maxActive - runs.runningCount - held
        // No slot free, or the queue paused: nothing starts.
        guard free > 0, !settings.paused else { return actions }
        switch claiming.starts(ready: ready, running: runs.runningCount + held, settings: settings) {
        case .none:
            break
        case .claim(let count):
            actions.append(.claim(count))
        case .start(let chosen):
            for id in chosen {
                guard var started = job(id) else { continue }
                var lifecycle = JobLifecycle(state: started.state)
                guard lifecycle.slotGranted() == .startDownload else { continue }
                let seen = started.state
                started.state = lifecycle.state
                started.retryAt = nil
                actions += [.record(started, expected: fenced(seen), tell: nil), .start(started, claim: nil)]
            }
        }
        return actions
    }

    /// A running job goes back to `queued` (`sent back`): its run stops after a checkpoint,
    /// and resumes from it when the job starts again. Nothing for a job that is not running.
    mutating func sendBack(_ job: JobSnapshot, now: Date, reason: String) -> [Action] {
        guard job.state == .running, let (_, actions) = try? lifecycle(job, now: now, { $0.sentBack() }) else { return [] }
        return [.note("job \(job.id) goes back to the queue: \(reason)")] + actions
    }

    // MARK: Claims and the store's changes (a cluster node's)

    /// The store gave this node a job (`claim(n)`): a run of it still here (rescued from this
    /// node and claimed again before it heard) stops, and the new one waits for it.
    mutating func claimed(_ claim: ClaimedJob, nodeName: String) -> [Action] {
        let id = claim.job.id
        var actions: [Action] = []
        if let run = runs.stop(id) { actions.append(.cancel(run)) }
        var job = claim.job
        job.node = nodeName
        runs[id].lease = claim.lease
        return actions + [.show(job), .start(job, claim: claim)]
    }

    /// The store refused the lease of `epoch` (another node owns the job now): the run stops
    /// at once, writing nothing more. Nil when that lease is not held (lost already, or a
    /// newer one is).
    mutating func leaseLost(id: String, epoch: Int64) -> [Action]? {
        guard let lease = runs[id].lease, lease.epoch == epoch else { return nil }
        runs[id].lease = nil
        return runs.stop(id).map { [.cancel($0)] } ?? []
    }

    /// A job held here (`local`) as the store holds it now (`storeChanged(row)`): another
    /// node paused, resumed, edited or finished it, or this node's own write is read back.
    ///
    /// A run here goes on while the row says it runs here (its own progress is newer than
    /// the row's); it stops when the row says otherwise, and goes back to the queue to start
    /// again under new values when the job was edited elsewhere.
    mutating func storeChanged(_ stored: JobSnapshot, local: JobSnapshot, nodeName: String, now: Date) -> [Action] {
        let id = stored.id
        var row = stored
        row.waitingFor = local.waitingFor  // computed here, not stored
        var actions: [Action] = []
        if runs[id].lease != nil || runs.running(id) != nil {
            guard row.state == .running, row.node == nodeName else {
                if let run = runs.stop(id) { actions.append(.cancel(run)) }
                return actions + replace(local, with: row) + [.letGo(id)]
            }
            row.takeRunFields(from: local)
            if row.limitRate != local.limitRate { actions.append(.setRate(id, row.limitRate)) }
            if row.url != local.url || row.headers != local.headers || row.connections != local.connections
                || row.proxy != local.proxy || row.requestedFilename != local.requestedFilename
            {
                return actions + [.keep(row)] + sendBack(row, now: now, reason: "it was edited on another node") + [.letGo(id)]
            }
        }
        return actions + replace(local, with: row) + [.letGo(id)]
    }

    /// `local` becomes the store's `row`. Finished elsewhere with no run here, its runtime
    /// (limiter, retry count, progress clock) goes, unless a command holds it (the command
    /// lets it go when done).
    private mutating func replace(_ local: JobSnapshot, with row: JobSnapshot) -> [Action] {
        let runtime = runs[row.id]
        if !row.state.isLive, runtime.slot == nil, runtime.lease == nil, !runtime.editing, runtime.holds == 0 {
            _ = runs.remove(row.id)
        }
        guard row != local else { return [] }
        // Let go once finished: the reads' overlap brings the row again, not to be shown again.
        return [.show(row)] + (row.state.isLive ? [] : [.shownEnd(row)])
    }

    // MARK: Runs

    /// A run of the job started (the runner made its task for a `start`, or a claim's).
    mutating func started(_ run: Run, id: String) {
        runs.start(run, id: id)
    }

    /// How a run's end is taken, by `runEnded`.
    enum RunEnding: Equatable {
        /// Record it (`endOfRun`), then `recorded`.
        case record
        /// Nothing to record; then `recorded`.
        case nothing
        /// A newer run takes its result over, or the job is gone: nothing more, not even
        /// `recorded`.
        case superseded
    }

    /// A run's task ended with `outcome`, the job being `job` (nil: deleted). What comes
    /// of it, and what to do first (a stopped run's lease goes back).
    mutating func runEnded(
        id: String, generation: Int, outcome: RunEnd.Outcome, job: JobSnapshot?
    ) -> (RunEnding, [Action]) {
        switch runs.ended(id, generation: generation) {
        case .own:
            // Until its end is recorded the run stays in its slot (`recording`): a pause that
            // comes meanwhile waits for that record, and answers it; one after a placed file
            // is refused at once (the job is completed).
            if outcome == .placed { runs[id].placedFile = true }
            return (.record, [])
        case .stopped:
            // A stopped run that placed its file anyway (the pause or the shutdown came after
            // the file was placed): honoured.
            if outcome == .placed, job?.state.isLive == true {
                runs[id].placedFile = true
                return (.record, [])
            }
            return (.nothing, [.releaseLease(id)])
        case .superseded:
            // A newer run holds the lease; a deleted job's lease (if any is left) goes.
            return (.superseded, runs.slot(id) == nil ? [.releaseLease(id)] : [])
        }
    }

    /// What a run's end does to its job (`RunEnd`): the job as it ends, and how it is
    /// stored. On a node holding the run's lease (a cluster's) the end is written under the
    /// lease first (`finishRun`), and `endStored` follows; else it is recorded behind at once.
    /// `result` is the placed file's, for a run that placed one.
    mutating func endOfRun(
        _ job: JobSnapshot, outcome: RunEnd.Outcome, result: DownloadResult?, now: Date, documentsDirectory: String
    ) -> (job: JobSnapshot, actions: [Action], storeFirst: StoreFirst?) {
        let id = job.id
        runs[id].lastProgressEvent = nil
        let record: RunEnd.Record
        switch RunEnd.decide(outcome, state: job.state) {
        case .releaseLease, .alreadyFinished:
            return (job, [.releaseLease(id)], nil)
        case .forgetLease:
            runs[id].lease = nil
            return (job, [], nil)
        case .record(let decided):
            record = decided
        }
        var ended = job
        if record.placed, let result {
            let documents = documentsDirectory + "/"
            ended.path = result.path.bytesAfter(prefix: documents).map(String.init) ?? result.fileName
            ended.filename = result.fileName
            ended.sha256 = result.sha256
            ended.bytesDone = result.bytes
            ended.bytesTotal = result.bytes
            ended.completedAt = now
            ended.error = nil
        }
        ended.state = record.state
        if let error = record.error { ended.error = error }
        if let retryIn = record.retryIn { ended.retryAt = now.addingTimeInterval(Double(retryIn.components.seconds)) }
        // A `Retry-After` wait carries its failures into the next run's backoff; a wait for
        // the store keeps what it had; anything else forgets them.
        if let failures = record.retryFailures {
            runs[id].retryFailures = failures
        } else if record.retryIn == nil {
            runs[id].retryFailures = nil
        }
        ended.speed = 0
        ended.eta = nil
        ended.node = nil
        ended.updatedAt = now
        let tell = WebhookEvent(ending: ended.state)
        let waits: [Action] = record.waitsForSpace ? [.waitForSpace(id)] : []
        if let lease = runs.takeLease(id) { return (ended, waits, .finishRun(ended, lease: lease, tell: tell)) }
        return (ended, waits + [.record(ended, expected: nil, tell: tell)] + endStored(ended), nil)
    }

    /// The store answered a run's end written under its lease (`StoreFirst.finishRun`):
    /// `before` is the job as the table held it when the write began, `now` as it holds it
    /// now (nil: deleted meanwhile; a delete that comes during the write waits for it and
    /// removes a placed file itself).
    func finishAnswered(
        _ answer: FinishAnswer, finishing: JobSnapshot, lease: Lease, tell: WebhookEvent?, before: JobSnapshot?, now: JobSnapshot?
    ) -> FinishFollowUp<Run> {
        guard let now else { return .nothing }
        switch answer {
        case .takenBack:
            return .readBack(takenBack: true)
        case .unavailable:
            // Shown ended here, recorded by the heartbeat once the store answers (or found
            // taken back then, when the outage outlasted the lease).
            return .unrecorded([.keepUnrecorded(finishing, lease: lease), .show(finishing), .schedule])
        case .recorded:
            // Paused, resumed or edited meanwhile: the store holds what won.
            return now != before ? .readBack(takenBack: false) : .recorded(tell: tell)
        }
    }

    /// A recorded run's end was told (its webhook stored): the job is shown ended, and what
    /// follows from its state follows; nothing when it was deleted meanwhile.
    mutating func endTold(_ finishing: JobSnapshot, present: Bool) -> [Action] {
        guard present else { return [] }
        return [.show(finishing)] + endStored(finishing)
    }

    /// A run's end is stored (behind on a single node; under its lease in a cluster): what
    /// follows from the job's new state.
    mutating func endStored(_ job: JobSnapshot) -> [Action] {
        var actions: [Action] = []
        // A finished job's limiter goes with its run (a resume makes a new one).
        if !job.state.isLive { runs[job.id].limiter = nil }
        if job.state == .failed { actions.append(.failDependents(of: job.id, reason: DependencyCascade.failureReason(of: job.id))) }
        // Once its state is stored (at once here when it was written under a lease; when
        // `JobWrites` has written it otherwise).
        return actions + [.schedule, .letGo(job.id)]
    }

    /// How a run's progress is taken, by `progressed`.
    enum ProgressTake: Equatable {
        /// Not the job's current run (stopped, superseded): dropped.
        case ignore
        /// Into the table (and the store's progress), no event: one went out less than
        /// 240 ms ago.
        case keep
        /// Into the table, and an event to subscribers.
        case publish
    }

    /// A run reported progress at `now` (real time): at most one progress event per job
    /// every 250 ms (docs/api.md, "Events"), whatever the engine's pace.
    mutating func progressed(id: String, generation: Int, now: ContinuousClock.Instant) -> ProgressTake {
        guard runs.running(id)?.generation == generation else { return .ignore }
        if let last = runs[id].lastProgressEvent, now - last < .milliseconds(240) { return .keep }
        runs[id].lastProgressEvent = now
        return .publish
    }

    /// Whether a finished job may leave the table now, its state being stored (`stored`):
    /// no run, lease, edit or command holds it. Its runtime goes when it does.
    mutating func letGo(_ job: JobSnapshot, stored: Bool) -> Bool {
        let runtime = runs[job.id]
        guard !job.state.isLive, stored, runtime.slot == nil, !runtime.editing, runtime.lease == nil, runtime.holds == 0 else {
            return false
        }
        _ = runs.remove(job.id)
        return true
    }

    // MARK: Edits

    /// What an edit sees of a job on this node (`JobEdit`).
    func editSight(_ id: String, state: JobState?) -> JobEdit.Sight {
        let run: JobEdit.Run = runs.running(id) != nil ? .running : runs.ending(id) != nil ? .ending : .none
        return JobEdit.Sight(state: state, run: run, claim: claiming.mayRun(holdingLease: runs[id].lease != nil) ? .thisNode : .otherNode)
    }

    /// An edit of `job` ended, applied or not: a run it stopped goes on (under the new
    /// values, or as it was), unless the job must now wait for other jobs; then the queue
    /// looks again.
    mutating func editEnded(_ job: JobSnapshot?, id: String, dependenciesComplete: Bool) -> [Action] {
        runs[id].editing = false
        guard let job else { return [.schedule] }
        switch JobEdit.afterwards(editSight(id, state: job.state), dependenciesComplete: dependenciesComplete) {
        case .restart:
            return [.start(job, claim: nil), .schedule]
        case .requeue:
            var queued = job
            queued.state = .queued
            return [.record(queued, expected: fenced(job.state), tell: nil), .schedule]
        case .nothing:
            return [.schedule]
        }
    }

    /// The end of the run of `generation` is recorded: its slot is free, unless a newer run
    /// took it. A finished job may leave the table then.
    mutating func recorded(id: String, generation: Int) -> [Action] {
        runs.recorded(id, generation: generation)
        return [.letGo(id)]
    }
}
