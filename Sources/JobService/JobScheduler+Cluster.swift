import DownloadEngine
import Foundation
import Logging
import NIOPosix
public import ServiceLifecycle
import SluiceCore
import CoreMetrics

/// A node of a cluster: jobs are claimed from the shared store rather than started from
/// memory, every write of a run is fenced by its lease, and what other nodes change is read
/// back (notified at once, polled every second, read in full after a reconnect).
extension JobScheduler {
    /// How often a node heartbeats, renews its leases and runs the rescue: a fifth of the
    /// lease, between 0.2 s and 2 s.
    static func heartbeatInterval(lease: Duration) -> Duration {
        max(.milliseconds(200), min(.seconds(2), lease / 5))
    }

    /// `GET /nodes`: the cluster's nodes, or this one alone.
    public func nodes() async throws -> [NodeStatus] {
        if let cluster { return try await cluster.nodes() }
        let runningJobs = order.filter { runs.running($0) != nil }
        return [NodeStatus(name: nodeName, startedAt: startedAt, lastHeartbeat: Date(), age: 0, runningJobs: runningJobs)]
    }

    /// Claims ready jobs for the free slots and starts them, behind this actor: one claim at
    /// a time, a later ask folded into one more claim. `schedule()` asks only when a job
    /// this node knows of looks ready; the store decides which are. None is asked while the
    /// store is known not to answer (the queue asks again when it does).
    ///
    /// A command that may have made a job ready (a create, a resume) waits for the claim
    /// before it answers (`claimed()`), so that the answer, and a command right after it,
    /// see the job claimed.
    func claimLater(free: Int) {
        guard cluster != nil, free > 0, !settings.paused, !isShuttingDown, storeAnswers else { return }
        guard claimTask == nil else {
            claimAgain = true
            return
        }
        claimTask = Task {
            repeat {
                claimAgain = false
                await claimAndStart()
            } while claimAgain && !isShuttingDown
            claimTask = nil
        }
    }

    /// Returns once the claim under way, if any, is done.
    func claimed() async {
        await claimTask?.value
    }

    private func claimAndStart() async {
        guard let cluster, !settings.paused, !isShuttingDown, storeAnswers else { return }
        let free = settings.maxActive - runs.runningCount - heldSlots
        guard free > 0 else { return }
        let claimed: [ClaimedJob]
        do {
            claimed = try await StoreCallBudget.$current.withValue(StoreCallBudget(configuration.storeBudget)) {
                try await cluster.claim(limit: free)
            }
        } catch {
            logger.warning("cannot claim jobs: \(error)")
            return
        }
        for claim in claimed {
            noteControlWrite(claim.job.id)
            claimsCounter.increment()
            perform(machine.claimed(claim, nodeName: nodeName))
        }
    }

    /// Records that this node just wrote the job's control fields: a read of the store that
    /// began earlier must not take them back.
    func noteControlWrite(_ id: String) {
        book.noteControlWrite(id)
    }

    /// A run's lease was refused: the run stops at once, writing nothing more.
    func leaseLost(id: String, epoch: Int64) async {
        guard let actions = machine.leaseLost(id: id, epoch: epoch) else { return }
        logger.warning("job \(id): lease \(epoch) lost; another node owns the job now")
        leasesLostCounter.increment()
        perform(actions)
        // Bounded as a command's (the change feed reads it otherwise).
        await StoreCallBudget.bounded(configuration.storeBudget) { try? await refresh(id) }
    }

    /// Reads one job back from the store (another node changed it) and absorbs it, or its
    /// removal.
    func refresh(_ id: String) async throws {
        guard let cluster else { return }
        if let stored = try await cluster.job(id: id) { absorb(stored) } else { absorbRemoval(id) }
    }

    /// Gives a stopped run's lease back (a run an edit stopped keeps it, to go on).
    func releaseLease(_ id: String) {
        guard let leaseReleaser, !runs[id].editing, runs.running(id) == nil, let lease = runs.takeLease(id) else { return }
        progress?.forget(id)
        // Not waited for: an unreleased lease lapses by itself.
        leaseReleaser.release(lease)
    }

    /// Progress for the store, which renews the lease: the latest per run, written about
    /// once a second off this actor (`ClusterProgress`).
    func storeProgress(_ job: JobSnapshot) {
        guard let lease = runs[job.id].lease else { return }
        progress?.note(job, lease: lease)
    }

    // MARK: What other nodes changed

    /// Reads what changed since the last read (everything when `full`) and absorbs it.
    ///
    /// Awaited while this actor goes on, one read at a time (a later
    /// read absorbed before an earlier one would be taken back by it; asks meanwhile are
    /// folded into one more read). A row this node wrote again during a read is not taken
    /// from it: it is read again on its own at the next read, and the cursor moves on.
    func synchronize(full: Bool) async {
        guard cluster != nil, storeAnswers, !isShuttingDown else { return }
        guard !book.synchronizing else {
            book.syncAgain = true
            book.syncAgainFull = book.syncAgainFull || full
            return
        }
        book.synchronizing = true
        var full = full
        while true {
            await readChanges(full: full)
            guard book.syncAgain, !isShuttingDown else { break }
            full = book.syncAgainFull
            book.syncAgain = false
            book.syncAgainFull = false
        }
        book.synchronizing = false
    }

    private func readChanges(full: Bool) async {
        guard let cluster, storeAnswers, !Task.isCancelled else { return }
        let since = full ? nil : book.cursor
        let writesBefore = book.writeCount
        let recheck = Array(book.toRecheck)
        book.toRecheck = []
        let countsMark = book.storedCounts.readStart
        let changes: ClusterChanges
        let rechecked: [(id: String, row: JobSnapshot?)]
        do {
            changes = try await cluster.changes(since: since)
            var read: [(id: String, row: JobSnapshot?)] = []
            for id in recheck { read.append((id, try await cluster.job(id: id))) }
            rechecked = read
            // What live rows wait for and this node does not know: read before they are
            // absorbed (unknown, a dependency would look deleted).
            let rows = changes.jobs + rechecked.compactMap(\.row)
            try await readDependencyStates(Set(rows.filter(\.state.isLive).flatMap(\.after)))
        } catch {
            book.toRecheck.formUnion(recheck)
            logger.warning("cannot read the cluster's changes: \(error)")
            return
        }
        absorb(changes, rechecked: rechecked, writesBefore: writesBefore, countsMark: countsMark)
    }

    private func absorb(_ changes: ClusterChanges, rechecked: [(id: String, row: JobSnapshot?)], writesBefore: Int, countsMark: Int) {
        // A row this node wrote after the read began, a run's end not recorded yet, or a job a
        // command holds (its store calls are awaited: the command reads what it needs itself):
        // read again at the next read, not taken from this one.
        let newer = { (id: String) in
            (self.book.controlWrites[id] ?? 0) > writesBefore || self.book.unrecordedRuns[id] != nil || self.runs[id].holds > 0
        }
        book.cursor = changes.cursor
        // One read at a time: nothing older than this read's start is needed any more.
        if book.controlWrites.count > 10_000 { book.controlWrites = book.controlWrites.filter { $0.value > writesBefore } }
        if let stored = changes.settings, stored != settings, book.settingsWritten <= writesBefore {
            settings = stored
            queueLimiter.setRate(stored.limitRate)
        }
        // What this read's rows let go, its counts have (one snapshot); rows read again on
        // their own come from another.
        book.absorbingRead = true
        for job in changes.jobs {
            if newer(job.id) { book.toRecheck.insert(job.id) } else { absorb(job) }
        }
        book.absorbingRead = false
        for (id, row) in rechecked {
            if newer(id) {
                book.toRecheck.insert(id)
            } else if let row {
                absorb(row)
            } else if jobs[id] != nil {
                absorbRemoval(id)
            }
        }
        for id in changes.removed {
            if jobs[id] == nil {
                // A finished job held by no one here: only its state, if a live job waited for
                // it; streams are told once.
                finishedDependencies[id] = nil
                if book.shownEnds.isNewRemoval(id) { events.publish(.removed(id: id)) }
            } else if newer(id) {
                book.toRecheck.insert(id)
            } else {
                absorbRemoval(id)
            }
        }
        if changes.isFull {
            // A full read has the live jobs only: one held here but absent has finished or
            // gone, which its own row tells (read again at once).
            let present = Set(changes.jobs.map(\.id))
            let absent = order.filter { !present.contains($0) && jobs[$0]?.state.isLive == true }
            if !absent.isEmpty {
                book.toRecheck.formUnion(absent)
                book.syncAgain = true
            }
        }
        jobs.setStoredOnly(
            book.storedCounts.counts(
                store: changes.counts, held: jobs.heldCounts(), mark: countsMark,
                rows: Dictionary(changes.jobs.map { ($0.id, $0.state) }, uniquingKeysWith: { $1 }), removed: Set(changes.removed)
            )
        )
        // Past the reads' overlap, a finished row shown is not seen again unless it changed.
        book.shownEnds.forgetOld()
        schedule()
        scheduleWakeUp()
    }

    /// One job as another node (or this one) left it in the store. A node holds live jobs
    /// only: a finished one is shown, then let go (its state kept when a live job waits
    /// for it).
    func absorb(_ stored: JobSnapshot) {
        // A create this node answered 503: its late row is removed, never shown.
        guard book.abandonedCreates[stored.id] == nil else { return }
        guard let local = jobs[stored.id] else {
            guard stored.state.isLive else {
                if finishedDependencies[stored.id] != nil || jobs.isWaitedFor(stored.id) {
                    finishedDependencies[stored.id] = stored.state
                }
                // Reads overlap by 2 s, so the same row comes two or three times: shown once.
                if book.shownEnds.isNew(stored) { events.publish(.job(stored)) }
                return
            }
            // Held only once what it waits for is known: unknown, it would look deleted. The
            // store is asked, and the row read again at the next read.
            guard dependenciesKnown(stored.after) else {
                askStore(about: stored.after)
                book.toRecheck.insert(stored.id)
                return
            }
            jobs.insertByAge(stored)
            events.publish(.job(stored))
            return
        }
        perform(machine.storeChanged(stored, local: local, nodeName: nodeName, now: configuration.clock.now()))
    }

    func absorbRemoval(_ id: String) {
        stop(id)
        let held = jobs[id] != nil
        jobs[id] = nil
        // Everything kept about it goes; a run stopped here ends superseded.
        _ = runs.remove(id)
        // Told once (this node's own delete may have told it already).
        if held { events.publish(.removed(id: id)) }
        // The deleting node removed the partial files it can see; these may be on this
        // node's own disk.
        removePartialFiles(id)
    }

    func removePartialFiles(_ id: String) {
        for path in PartialFileTakeover.all(cacheDirectory: configuration.cacheDirectory, id: id) { unlink(path) }
    }

    /// `StoreFirst.controlWrite`: a command's change written first, while the store still
    /// holds `expected`, with this node's change of the job that was still queued. Throws
    /// when the store cannot write (nothing changed; the queued change goes back to be
    /// written behind) or another node changed the job first (409, read back). False when
    /// the job moved on here while the store was asked.
    func controlWrite(_ job: JobSnapshot, expected: JobState, with queued: JobWrites.Write?) async throws -> Bool {
        guard let cluster else { return true }
        let id = job.id
        let seen = jobs[id]?.state
        noteControlWrite(id)
        let written: Bool
        do {
            written = try await cluster.update(job, expectedState: expected)
            if written, let deliveries = queued?.deliveries, !deliveries.isEmpty {
                try await cluster.saveDeliveries(deliveries)
                webhooks?.stored(deliveries)
            }
        } catch {
            // Nothing changed: the queued change goes back to be written behind.
            if let queued { writes.put(queued.job, expected: queued.expected, deliveries: queued.deliveries) }
            throw error
        }
        guard written else {
            try await refresh(id)
            throw SluiceError(
                .invalidTransition,
                "job \(id) changed on another node meanwhile (it is \(jobs[id]?.state.rawValue ?? "gone") now); try again"
            )
        }
        noteControlWrite(id)
        return jobs[id]?.state == seen
    }

    /// Where a run saves its checkpoints: fenced by its lease in a cluster.
    func checkpointStore(id: String, lease: Lease?) -> any CheckpointStore {
        guard let cluster, let lease else { return JobCheckpointStore(repository: repository, id: id, writer: checkpointWriter) }
        return FencedCheckpointStore(store: cluster, writer: checkpointWriter, lease: lease) { [weak self] in
            await self?.leaseLost(id: id, epoch: lease.epoch)
        }
    }

    /// A cluster node's stopped runs gave their jobs back to the queue for the others: the
    /// node leaves the cluster (its row removed).
    func leaveCluster() async {
        await cluster?.close(removingNode: true)
    }

    /// `StoreFirst.finishRun`: a cluster run's end written under its lease before anything
    /// is shown; the store's answer goes back to the machine (`finishAnswered`), which says
    /// what follows. False when the store could not take it (the heartbeat records it later,
    /// `recordEndedRuns`).
    func finishRun(_ finishing: JobSnapshot, lease: Lease, tell: WebhookEvent?) async -> Bool {
        guard let cluster else { return true }
        let id = finishing.id
        progress?.forget(id)
        noteControlWrite(id)
        let before = jobs[id]
        let answer: FinishAnswer
        do {
            // Awaited: this actor answers meanwhile.
            answer = try await cluster.finishRun(finishing, lease: lease) ? .recorded : .takenBack
            // A read of the change feed that began during the wait is older than this.
            noteControlWrite(id)
        } catch {
            logger.warning("job \(id) ended while the store cannot record it; recorded once it answers: \(error)")
            answer = .unavailable
        }
        switch machine.finishAnswered(answer, finishing: finishing, lease: lease, tell: tell, before: before, now: jobs[id]) {
        case .nothing:
            return true
        case .readBack(let takenBack):
            if takenBack { leasesLostCounter.increment() }
            try? await refresh(id)
            schedule()
            return true
        case .unrecorded(let actions):
            perform(actions)
            return false
        case .recorded(let tell):
            if let tell { await webhooks?.record(tell, job: finishing) }
            perform(machine.endTold(finishing, present: jobs[id] != nil))
            return true
        }
    }

    /// In a cluster, the bytes of a job another node has claimed meanwhile are that node's:
    /// read from the store just before they are changed.
    func checkNotRunningElsewhere(_ id: String) async throws {
        guard let cluster, runs[id].lease == nil, let stored = try await cluster.job(id: id), stored.state == .running else { return }
        absorb(stored)
        throw SluiceError(.invalidTransition, "job \(id) started on node \(stored.node ?? "another node") meanwhile: pause it first")
    }

    // MARK: The node's loops

    /// A cluster node's work beside its commands, as services for the group
    /// (`ClusterServices`): none for a single node.
    public nonisolated var clusterServices: [any Service] {
        guard let cluster, let progress else { return [] }
        return ClusterServices.make(for: self, cluster: cluster, progress: progress)
    }

    /// A cluster node's membership (`ClusterMembership`), first in the group so that it stops
    /// last: none for a single node.
    public nonisolated var clusterMembership: [any Service] { cluster == nil ? [] : [ClusterMembership(scheduler: self)] }

    func signalled(_ signal: ClusterSignal) async {
        guard !isShuttingDown else { return }
        switch signal {
        case .job:
            await synchronize(full: false)
        case .resync:
            await synchronize(full: true)
        }
    }

    /// One heartbeat: the runs that ended while the store did not answer recorded, this node
    /// alive, its leases renewed (any not renewed is lost). The store is awaited while this
    /// actor goes on.
    func beat() async {
        runningGauge.record(runs.runningCount)
        guard let cluster, !isShuttingDown, storeAnswers, !Task.isCancelled else { return }
        // Bounded as a command's: the ends it records tell the API's commands.
        await StoreCallBudget.bounded(configuration.storeBudget) { await recordEndedRuns() }
        let held = runs.leases
        do {
            let lost = try await cluster.heartbeat(running: held)
            book.heartbeatAnswered = true
            for id in lost { if let lease = runs[id].lease, held.contains(lease) { await leaseLost(id: id, epoch: lease.epoch) } }
        } catch {
            book.heartbeatAnswered = false
            logger.warning("heartbeat failed: \(error)")
        }
        await removeAbandonedCreates()
    }

    /// The rescue of other nodes' expired leases, if this node wins the lock. Only after this
    /// node's own last heartbeat was answered, and not while it has ends of its own to record
    /// (`recordEndedRuns`): those go first, before a rescue could take them back.
    func rescue() async {
        guard let cluster, !isShuttingDown, storeAnswers, book.heartbeatAnswered, book.unrecordedRuns.isEmpty, !Task.isCancelled
        else { return }
        do {
            let rescued = try await cluster.rescue(staleAfter: cluster.leaseDuration)
            if !rescued.isEmpty {
                logger.notice("requeued \(rescued.count) job(s) whose node stopped renewing its lease: \(rescued.joined(separator: ", "))")
                rescuedCounter.increment(by: Int64(rescued.count))
                await synchronize(full: false)
            }
        } catch {
            logger.warning("rescue failed: \(error)")
        }
    }

    /// Removes the rows of creates answered 503 (`abandonedCreates`), in case their insert
    /// committed after the answer: again at every heartbeat for a minute, since a `COMMIT`
    /// the node gave up on may land later still. Nothing was told of them, so no webhook is.
    func removeAbandonedCreates() async {
        for (id, since) in book.abandonedCreates {
            do {
                try await repository.delete(id: id, deliveries: [])
            } catch {
                return
            }
            if ContinuousClock.now - since > .seconds(60) { book.abandonedCreates[id] = nil }
        }
    }

    /// Records the outcomes of runs that ended while the store did not answer; one the store
    /// took back meanwhile (another node has it now) is read again.
    func recordEndedRuns() async {
        guard let cluster else { return }
        for (id, ended) in book.unrecordedRuns {
            // Deleted meanwhile (the loop awaits the store): nothing to record.
            guard book.unrecordedRuns[id] != nil else { continue }
            do {
                let recorded = try await cluster.finishRun(ended.job, lease: ended.lease)
                book.unrecordedRuns[id] = nil
                noteControlWrite(id)
                if !recorded {
                    leasesLostCounter.increment()
                    try? await refresh(id)
                    letGoIfFinished(id)
                    schedule()
                } else {
                    // Told, then what follows from its state, as for an end recorded at once.
                    if let tell = WebhookEvent(ending: ended.job.state) { await webhooks?.record(tell, job: ended.job) }
                    perform(machine.endStored(ended.job))
                }
            } catch {
                logger.warning("cannot save job \(id) yet: \(error)")
                return
            }
        }
    }
}

extension JobSnapshot {
    /// The fields a run writes (state and progress), from this node's copy of its own run.
    mutating func takeRunFields(from run: JobSnapshot) {
        state = run.state
        bytesDone = run.bytesDone
        bytesTotal = run.bytesTotal
        speed = run.speed
        eta = run.eta
        filename = run.filename
        resumable = run.resumable
        updatedAt = max(updatedAt, run.updatedAt)
    }
}
