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
        DependencyStates.settle(on: self)
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

    /// A running job goes back to `queued`; its download stops after a checkpoint and
    /// resumes from it when the job starts again.
    func sendBack(_ id: String, reason: String) {
        guard let job = jobs[id] else { return }
        perform(machine.sendBack(job, now: configuration.clock.now(), reason: reason))
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
        DependencyStates.forget(job.after, on: self)
    }

    /// Brings a finished job back from the store for a command on it (a resume, an edit, a
    /// delete); `letGoIfFinished` lets it go again after.
    ///
    /// The command holds the job until `releaseHold`: its store calls are awaited, and a
    /// finished job whose state is stored meanwhile must not leave the table under it.
    func holdStored(_ id: String) async throws {
        if jobs[id] == nil, let stored = try await storedFinishedJob(id) {
            // What it waits for, as the store has it (a dependency gone from the table too).
            try await DependencyStates.read(stored.after, on: self)
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
