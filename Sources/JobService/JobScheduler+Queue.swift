import DownloadEngine
import Foundation
import Logging
public import SluiceCore
import Synchronization

/// The queue as a whole: its settings, what starts next, what is sent back, and what
/// dependencies allow.
extension JobScheduler {
    /// `GET /queue`: the settings and how many jobs are in each state.
    public nonisolated func queue() -> QueueStatus {
        QueueStatus(
            settings: settingsBox.withLock { $0 }, counts: countsByState(), maxConnectionsPerHost: configuration.hostConnections?.limit,
            connectionsPerHost: configuration.hostConnections?.inUse ?? [:]
        )
    }

    /// `PATCH /queue`: stored first (nothing changes when the store cannot write), then
    /// applied: a new rate at once, a new `maxActive` within this call (jobs over it go
    /// back to `queued` after a checkpoint), a resumed queue starts what it can.
    public func updateQueue(_ patch: QueueSettingsPatch) throws -> QueueStatus {
        let updated = patch.applied(to: settings)
        if updated != settings {
            writeCount += 1
            settingsWritten = writeCount
            try repository.saveQueueSettings(updated)
            settings = updated
            queueLimiter.setRate(updated.limitRate)
            logger.info(
                "queue settings changed: paused \(updated.paused), maxActive \(updated.maxActive), limitRate \(updated.limitRate.map(String.init) ?? "none")"
            )
            schedule()
        }
        return queue()
    }

    /// Starts queued jobs that are ready (dependencies complete, no `Retry-After` pending),
    /// highest priority then oldest first, while slots are free and the queue is not
    /// paused; sends running jobs over `maxActive` back.
    func schedule() {
        guard !isShuttingDown, !holdsScheduling else { return }
        settleDependencies()
        let over = QueuePlan.preemptions(running: runs.runningIDs.compactMap { candidate($0) }, settings: settings)
        for id in over { sendBack(id, reason: "the queue allows \(settings.maxActive) running jobs") }
        // A run an edit stopped, to go on when the edit ends, keeps its slot meanwhile.
        let held = heldSlots
        let free = settings.maxActive - runs.runningCount - held
        // No slot free, or the queue paused: nothing starts, and the queue is not read.
        guard free > 0, !settings.paused else { return }
        let ready = jobs.readyToStart(at: configuration.clock.now()).filter { !runs[$0.id].editing }
        let ids: [String]
        switch claiming.starts(ready: ready, running: runs.runningCount + held, settings: settings) {
        case .none: return
        case .claim(let count): return claimAndStart(free: count)
        case .start(let chosen): ids = chosen
        }
        for id in ids {
            guard var job = jobs[id] else { continue }
            var lifecycle = JobLifecycle(state: job.state)
            guard lifecycle.slotGranted() == .startDownload else { continue }
            job.state = lifecycle.state
            job.retryAt = nil
            update(job)
            startDownload(job)
        }
    }

    /// Slots kept by runs an edit stopped, to go on when the edit ends.
    var heldSlots: Int {
        runs.editingIDs.filter {
            runs.running($0) == nil && jobs[$0]?.state == .running && claiming.mayRun(holdingLease: runs[$0].lease != nil)
        }.count
    }

    /// Whether a new queued job would be the one `schedule()` starts next, at once: a single
    /// node with a free slot and no other job queued (a queued one may outrank it). Such a
    /// job is stored running in its creation's write.
    func startsAtOnce(_ job: JobSnapshot) -> Bool {
        guard claiming.startsInItsCreation, job.state == .queued, job.waitingFor.isEmpty, !settings.paused, !isShuttingDown,
            !holdsScheduling
        else { return false }
        return jobs.countsByState()[.queued, default: 0] == 0 && runs.runningCount + heldSlots < settings.maxActive
    }

    /// Brings every job's `waitingFor` up to date. A queued job one of whose dependencies no
    /// longer exists can never start: it fails, and so do the jobs waiting for it.
    func settleDependencies() {
        for candidate in jobs.withDependencies {
            let id = candidate.id
            guard var job = jobs[id], !job.after.isEmpty || !job.waitingFor.isEmpty else { continue }
            let before = job
            switch job.state {
            case .running, .completed:
                job.waitingFor = []
            case .queued, .paused, .failed:
                // First: on a cluster node the verdict may read what the job waits for.
                let verdict = job.state == .queued ? dependencyVerdict(job) : nil
                job.waitingFor = notCompleted(job.after)
                if case .failed(_, let reason)? = verdict {
                    failForDependency([(id, reason)])
                    continue
                }
            }
            if job != before { update(job) }
        }
    }

    /// What `job`'s dependencies say. A dependency this node does not know is gone on a single
    /// node (it holds every live job and the states of the finished ones live jobs wait for);
    /// on a cluster node it may have finished elsewhere before this node heard of the job (an
    /// edit made on another node, a claim), so the store is asked before the job fails, and
    /// the job waits while the store cannot tell.
    func dependencyVerdict(_ job: JobSnapshot) -> JobDependencies.Verdict {
        let verdict = JobDependencies.verdict(after: job.after, state: { self.stateOf($0) })
        guard case .failed = verdict, claiming == .leased else { return verdict }
        guard (try? readDependencyStates(job.after)) == true else { return .waiting(notCompleted(job.after)) }
        return JobDependencies.verdict(after: job.after, state: { self.stateOf($0) })
    }

    /// Fails the queued job `id` with `dependency_failed`, then the queued jobs waiting for
    /// it, and so on down the chain (`DependencyCascade` decides; this records). Called when
    /// a dependency fails or goes: a job resumed later waits for it again (a failed
    /// dependency can be retried).
    func failForDependency(_ starts: [(id: String, reason: String)]) {
        guard !starts.isEmpty else { return }
        // Who waits for whom, read once.
        var dependents: [String: [String]] = [:]
        for other in jobs.withDependencies {
            for dependency in other.after { dependents[dependency, default: []].append(other.id) }
        }
        var cascade = DependencyCascade(starts: starts.map { .init(id: $0.id, reason: $0.reason) }, dependents: dependents)
        while let step = cascade.next(state: { self.jobs[$0]?.state }), var job = jobs[step.id] {
            logger.info("job \(step.id) fails: \(step.reason)")
            job.state = .failed
            job.retryAt = nil
            job.waitingFor = notCompleted(job.after)
            job.error = .init(code: SluiceError.Code.dependencyFailed.rawValue, message: step.reason)
            // In a cluster every node may see the failure; the one whose write wins tells.
            guard update(job) else { continue }
            webhooks?.record(.failed, job: job)
            cascade.recorded(step.id)
            letGoIfFinished(step.id, waitedFor: cascade.isWaitedFor(step.id))
        }
    }

    /// The jobs whose `after` names `id`.
    func waiting(for id: String) -> [String] {
        jobs.withDependencies.filter { $0.after.contains(id) }.map(\.id)
    }

    /// A running job goes back to `queued`; its download stops after a checkpoint and
    /// resumes from it when the job starts again.
    func sendBack(_ id: String, reason: String) {
        guard jobs[id]?.state == .running else { return }
        logger.info("job \(id) goes back to the queue: \(reason)")
        _ = try? transition(id) { $0.sentBack() }
    }

    /// Those of `after` that have not completed (gone ones included).
    func notCompleted(_ after: [String]) -> [String] {
        after.filter { stateOf($0) != .completed }
    }

    /// A job's state: held in the table, or that of a finished dependency the table let go.
    func stateOf(_ id: String) -> JobState? { jobs[id]?.state ?? finishedDependencies[id] }

    /// Whether `id` names a job a new `after` may wait for: held, or finished in the store
    /// (its state kept from now on for the dependency rules).
    func dependencyExists(_ id: String) throws -> Bool {
        if stateOf(id) != nil { return true }
        guard let stored = try storedFinishedJob(id) else { return false }
        finishedDependencies[id] = stored.state
        return true
    }

    /// A finished job whose state is stored leaves the table: the store holds it, the table
    /// counts it. The live jobs that wait for it keep its state. (On a cluster node, once no
    /// lease of it is held and its run's end is recorded.)
    ///
    /// `waitedFor`, when the caller knows it (a chain failing link by link does), saves a look
    /// at every dependent job.
    func letGoIfFinished(_ id: String, waitedFor: Bool? = nil) {
        guard let job = jobs[id], !job.state.isLive, runs.slot(id) == nil, !runs[id].editing, runs[id].lease == nil,
            unrecordedRuns[id] == nil
        else { return }
        if waitedFor ?? jobs.isWaitedFor(id) { finishedDependencies[id] = job.state }
        jobs.evict(id)
        if cluster != nil {
            // Its end stored by this node: counted until a read of the store has seen it, and
            // shown already (the read brings the row again).
            if !absorbingRead { storedCounts.letGo(id, state: job.state) }
            shownEnds.shown(job)
        }
        // Its limiter, retry count and progress clock go with it.
        _ = runs.remove(id)
        forgetFinishedDependencies(of: job)
    }

    /// The finished dependencies `job` named that no job held here waits for any more: their
    /// states are not needed (a new `after` reads them from the store again).
    func forgetFinishedDependencies(of job: JobSnapshot) {
        for dependency in job.after where finishedDependencies[dependency] != nil && !jobs.isWaitedFor(dependency) {
            finishedDependencies[dependency] = nil
        }
    }

    /// Brings a finished job back from the store for a command on it (a resume, an edit, a
    /// delete); `letGoIfFinished` lets it go again after.
    func holdStored(_ id: String) throws {
        guard jobs[id] == nil, let stored = try storedFinishedJob(id) else { return }
        jobs.adopt(stored)
        // What it waits for, as the store has it (a dependency gone from the table too).
        try readDependencyStates(stored.after)
    }

    /// Reads from the store the states of those of `ids` this node knows nothing of (finished
    /// jobs it let go, or never held), for the dependency rules; one with no row is gone.
    /// False when one is live there and not held here yet (a cluster's change feed brings it).
    @discardableResult
    func readDependencyStates(_ ids: some Sequence<String>) throws -> Bool {
        var known = true
        for dependency in ids where stateOf(dependency) == nil {
            guard let stored = try repository.job(id: dependency) else { continue }
            finishedDependencies[dependency] = stored.state
            if stored.state.isLive { known = false }
        }
        return known
    }

    /// Whether every job in `after` has completed.
    func dependenciesComplete(_ job: JobSnapshot) -> Bool {
        notCompleted(job.after).isEmpty
    }

    /// Runs `body` with scheduling held (a bulk action: a slot one job frees is not given to
    /// a job the same action is about to stop), then schedules once.
    func holdingSchedule<T>(_ body: () throws -> T) rethrows -> T {
        holdsScheduling = true
        defer {
            holdsScheduling = false
            schedule()
        }
        return try body()
    }

    func holdingSchedule<T>(_ body: () async throws -> T) async rethrows -> T {
        holdsScheduling = true
        defer {
            holdsScheduling = false
            schedule()
        }
        return try await body()
    }

    /// The limiter a job's download consumes from: its own, under the queue's, so that a
    /// rate set or removed while it runs (`PATCH /jobs/ID`) applies at once.
    func limiter(for job: JobSnapshot) -> RateLimiter {
        if let existing = runs[job.id].limiter {
            existing.setRate(job.limitRate)
            return existing
        }
        let limiter = RateLimiter(bytesPerSecond: job.limitRate, clock: configuration.clock, parent: queueLimiter)
        runs[job.id].limiter = limiter
        return limiter
    }

    private func candidate(_ id: String) -> QueuePlan.Candidate? {
        guard let job = jobs[id], let sequence = jobs.position(of: id) else { return nil }
        return QueuePlan.Candidate(id: id, priority: job.priority, sequence: sequence)
    }
}

/// `GET /queue`'s answer.
public struct QueueStatus: Sendable, Equatable {
    public var settings: QueueSettings
    public var counts: [JobState: Int]
    /// `--max-connections-per-host`, and the connections open to each host now.
    public var maxConnectionsPerHost: Int?
    public var connectionsPerHost: [String: Int] = [:]

    public var json: JSONValue {
        .object([
            ("paused", .bool(settings.paused)),
            ("maxActive", JSONValue(settings.maxActive)),
            ("limitRate", JSONValue(settings.limitRate)),
            ("counts", .object(JobState.allCases.map { ($0.rawValue, JSONValue(counts[$0] ?? 0)) })),
            ("maxConnectionsPerHost", maxConnectionsPerHost.map { JSONValue($0) } ?? .null),
            ("connectionsPerHost", .object(connectionsPerHost.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) })),
        ])
    }
}
