import DownloadEngine
import Foundation
import Logging
import SluiceCore
import Synchronization

/// The queue as a whole: its settings, what starts next, what is sent back, and what
/// dependencies allow.
extension JobScheduler {
    /// `GET /queue`: the settings and how many jobs are in each state.
    public nonisolated func queue() -> QueueStatus {
        let disk = diskBox.withLock { $0 }
        var status = QueueStatus(
            settings: settingsBox.withLock { $0 }, inEffect: inEffectBox.withLock { $0 }, counts: countsByState(),
            maxConnectionsPerHost: configuration.hostConnections?.limit,
            connectionsPerHost: configuration.hostConnections?.inUse ?? [:]
        )
        status.freeSpace = disk.available
        status.diskLow = disk.low
        status.quota = quotaBox.withLock { $0 }
        return status
    }

    /// Starts queued jobs that are ready (dependencies complete, no `Retry-After` pending),
    /// highest priority then oldest first, while slots are free and the queue is not
    /// paused; sends running jobs over `maxActive` back.
    func schedule() {
        guard !isShuttingDown, schedulingHeld == 0 else { return }
        settleDependencies()
        // A run an edit stopped, to go on when the edit ends, keeps its slot meanwhile.
        let held = heldSlots
        let settings = inEffect.settings
        let holds = self.holds
        // A quota reached: every run goes back to the queue, its bytes kept, until the period ends.
        if holds.quotaReached {
            for id in runs.runningIDs { sendBack(id, reason: "a download quota is reached") }
        }
        // A closed window: what it holds goes back to the queue, its bytes kept.
        if holds.windowClosed {
            for id in runs.runningIDs where jobs[id].map({ !$0.ignoreSchedule }) ?? false {
                sendBack(id, reason: inEffect.windowClosedReason)
            }
        }
        let free = settings.maxActive - runs.runningCount - held
        // No slot free, the queue paused, or held whole: the queue is not read (it may be
        // long). Else the free slots' worth of the best, as many more as edits hold back, and
        // what the queue's holds may pass over (`QueueHolds.readLimit`).
        let now = configuration.clock.now()
        let limit = holds.readLimit(wanted: free + runs.editingIDs.count)
        let ready =
            free > 0 && !settings.paused && limit > 0
            ? jobs.readyToStart(at: now, limit: limit).filter {
                !runs[$0.id].editing && (!holds.holdsAny || jobs[$0.id].map(holds.admits) == true)
            } : []
        let actions = machine.slotsFree(
            settings: settings, running: runs.runningIDs.compactMap { candidate($0) }, held: held,
            ready: ready,
            now: configuration.clock.now(), job: { self.jobs[$0] }
        )
        perform(actions)
    }

    /// Slots kept by runs an edit stopped, to go on when the edit ends, and by creates whose
    /// job starts at once while the store inserts it.
    var heldSlots: Int {
        runs.editingIDs.filter {
            runs.running($0) == nil && jobs[$0]?.state == .running && claiming.mayRun(holdingLease: runs[$0].lease != nil)
        }.count + startingInCreation
    }

    /// Whether a new queued job would be the one `schedule()` starts next, at once: a single
    /// node with a free slot and no other job queued (a queued one may outrank it). Such a
    /// job is stored running in its creation's write.
    func startsAtOnce(_ job: JobSnapshot) -> Bool {
        guard !isShuttingDown, schedulingHeld == 0 else { return false }
        let now = configuration.clock.now()
        guard holds.heldBy(job, now: now) == nil else { return false }
        return machine.startsAtOnce(job, queued: jobs.countsByState()[.queued, default: 0], held: heldSlots, settings: inEffect.settings)
    }

    /// Brings every job's `waitingFor` up to date. A queued job one of whose dependencies no
    /// longer exists can never start: it fails, and so do the jobs waiting for it.
    func settleDependencies() {
        for candidate in jobs.withDependencies {
            guard let job = jobs[candidate.id] else { continue }
            perform(machine.dependenciesSettled(job, state: { self.stateOf($0) }, gone: { self.book.goneFromStore.contains($0) }))
        }
    }

    /// Whether every job `after` names is known here: held, finished with its state kept, or
    /// found gone by the store.
    func dependenciesKnown(_ after: [String]) -> Bool {
        after.allSatisfy { stateOf($0) != nil || book.goneFromStore.contains($0) }
    }

    /// Asks the store, behind this actor, for the states of those of `ids` this node knows
    /// nothing of; schedules again with the answers. One with no row is gone.
    func askStore(about ids: [String]) {
        let unknown = ids.filter { stateOf($0) == nil && !book.goneFromStore.contains($0) && !book.askingStoreAbout.contains($0) }
        guard !unknown.isEmpty, storeAnswers else { return }
        book.askingStoreAbout.formUnion(unknown)
        Task {
            // A budget of its own, not the request's that asked (spent, it would fail at once).
            let read = await StoreCallBudget.$current.withValue(StoreCallBudget(configuration.storeBudget)) {
                do {
                    try await self.readDependencyStates(unknown)
                    return true
                } catch {
                    self.logger.warning("cannot read the jobs others wait for: \(error)")
                    return false
                }
            }
            self.book.askingStoreAbout.subtract(unknown)
            // Read: the queue looks again. Not read: the next read of the change feed asks again.
            if read { self.schedule() }
        }
    }

    /// Fails the queued job `id` with `dependency_failed`, then the queued jobs waiting for
    /// it, and so on down the chain (`DependencyCascade` decides; this records). Called when
    /// a dependency fails or goes: a job resumed later waits for it again (a failed
    /// dependency can be retried).
    func failForDependency(_ starts: [(id: String, reason: String)]) {
        perform(
            machine.dependencyFailed(
                starts.map { .init(id: $0.id, reason: $0.reason) }, withDependencies: jobs.withDependencies, now: configuration.clock.now(),
                state: { self.stateOf($0) }
            )
        )
    }

    /// The jobs whose `after` names `id`.
    func waiting(for id: String) -> [String] {
        jobs.withDependencies.filter { $0.after.contains(id) }.map(\.id)
    }

    /// A running job goes back to `queued`; its download stops after a checkpoint and
    /// resumes from it when the job starts again.
    func sendBack(_ id: String, reason: String) {
        guard let job = jobs[id] else { return }
        perform(machine.sendBack(job, now: configuration.clock.now(), reason: reason))
    }

    /// Those of `after` that have not completed (gone ones included).
    func notCompleted(_ after: [String]) -> [String] {
        after.filter { stateOf($0) != .completed }
    }

    /// A job's state: held in the table, or that of a finished dependency the table let go.
    func stateOf(_ id: String) -> JobState? { jobs[id]?.state ?? finishedDependencies[id] }

    /// Refuses an `after` naming a job that does not exist (held, or finished in the store).
    func checkDependenciesExist(_ after: [String]) async throws {
        for dependency in after where try await !dependencyExists(dependency) {
            throw SluiceError(.invalidField, "after names no job \(dependency)", field: "after")
        }
    }

    /// Whether `id` names a job a new `after` may wait for: held, or finished in the store
    /// (its state kept from now on for the dependency rules).
    func dependencyExists(_ id: String) async throws -> Bool {
        if stateOf(id) != nil { return true }
        guard let stored = try await storedFinishedJob(id) else { return false }
        finishedDependencies[id] = stored.state
        return true
    }

    /// A finished job whose state is stored leaves the table: the store holds it, the table
    /// counts it. The live jobs that wait for it keep its state. (On a cluster node, once no
    /// lease of it is held and its run's end is recorded.)
    func letGoIfFinished(_ id: String) {
        // Once its state is stored (until then the store would show it live), and once no
        // command holds it.
        guard let job = jobs[id], machine.letGo(job, stored: book.unrecordedRuns[id] == nil && !writes.isPending(id)) else { return }
        if jobs.isWaitedFor(id) { finishedDependencies[id] = job.state }
        jobs.evict(id)
        book.letGo(job)
        forgetFinishedDependencies(of: job)
    }

    /// The finished dependencies `job` named that no job held here waits for any more: their
    /// states are not needed (a new `after` reads them from the store again).
    func forgetFinishedDependencies(of job: JobSnapshot) {
        forgetFinishedDependencies(job.after)
    }

    /// As above, for the `after` lists of creates refused after their dependencies were read.
    func forgetFinishedDependencies(_ after: [String]) {
        for dependency in after
        where (finishedDependencies[dependency] != nil || book.goneFromStore.contains(dependency)) && !jobs.isWaitedFor(dependency) {
            finishedDependencies[dependency] = nil
            book.goneFromStore.remove(dependency)
        }
    }

    /// Brings a finished job back from the store for a command on it (a resume, an edit, a
    /// delete); `letGoIfFinished` lets it go again after.
    ///
    /// The command holds the job until `releaseHold`: its store calls are awaited, and a
    /// finished job whose state is stored meanwhile must not leave the table under it.
    func holdStored(_ id: String) async throws {
        if jobs[id] == nil, let stored = try await storedFinishedJob(id) {
            // What it waits for, as the store has it (a dependency gone from the table too).
            try await readDependencyStates(stored.after)
            // Held meanwhile (another command brought it back): that copy is newer.
            if jobs[id] == nil { jobs.adopt(stored) }
        }
        runs[id].holds += 1
    }

    /// A command holding the job is done: a finished job may leave the table.
    func releaseHold(_ id: String) {
        if runs[id].holds > 0 { runs[id].holds -= 1 }
        letGoIfFinished(id)
    }

    /// Reads from the store the states of those of `ids` this node knows nothing of (finished
    /// jobs it let go, or never held), for the dependency rules; one with no row is gone.
    /// False when one is live there and not held here yet (a cluster's change feed brings it).
    @discardableResult
    func readDependencyStates(_ ids: some Sequence<String>) async throws -> Bool {
        var known = true
        for dependency in ids where stateOf(dependency) == nil {
            guard let stored = try await repository.job(id: dependency) else {
                book.goneFromStore.insert(dependency)
                continue
            }
            book.goneFromStore.remove(dependency)
            // Held meanwhile: the table has it.
            guard stateOf(dependency) == nil else { continue }
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
        schedulingHeld += 1
        defer {
            schedulingHeld -= 1
            schedule()
        }
        return try body()
    }

    func holdingSchedule<T>(_ body: () async throws -> T) async rethrows -> T {
        schedulingHeld += 1
        defer {
            schedulingHeld -= 1
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
