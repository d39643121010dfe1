import DownloadEngine
import Foundation
import Logging
import NIOPosix
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
    public func nodes() throws -> [NodeStatus] {
        if let cluster { return try cluster.nodes() }
        let runningJobs = order.filter { runs.running($0) != nil }
        return [NodeStatus(name: nodeName, startedAt: startedAt, lastHeartbeat: Date(), age: 0, runningJobs: runningJobs)]
    }

    /// Claims ready jobs for the free slots and starts them. `schedule()` asks only when a
    /// job this node knows of looks ready; the store decides which are.
    ///
    /// The claim runs in this actor's turn, so that a command right after the creation sees
    /// the job claimed (asked concurrently, a pause or edit could land between the claim's
    /// write and its start). It is bounded: by the request's budget when a request asked,
    /// else by `StoreCallBudget.request`; and none is asked while the store is known not to answer (the
    /// queue asks again when it does).
    func claimAndStart(free: Int) {
        guard let cluster, free > 0, !settings.paused, !isShuttingDown, storeAnswers else { return }
        let claimed: [ClaimedJob]
        do {
            claimed = try StoreCallBudget.bounded {
                try cluster.claim(limit: free)
            }
        } catch {
            logger.warning("cannot claim jobs: \(error)")
            return
        }
        for claim in claimed {
            noteControlWrite(claim.job.id)
            // Rescued from this node and claimed again before it heard: the old run stops
            // (its writes are refused now), and the new one waits for it.
            if runs.running(claim.job.id) != nil { stop(claim.job.id) }
            var job = claim.job
            job.node = nodeName
            if jobs[job.id] == nil { jobs.insertByAge(job) }
            jobs[job.id] = job
            runs[job.id].lease = claim.lease
            claimsCounter.increment()
            events.publish(.job(job))
            startDownload(job, claim: claim)
        }
    }

    /// Whether the store answered recently (`StoreHealth`): background store work waits
    /// while it does not.
    nonisolated var storeAnswers: Bool { storeHealth?.isAvailable ?? true }

    /// Records that this node just wrote the job's control fields: a read of the store that
    /// began earlier must not take them back.
    func noteControlWrite(_ id: String) {
        // Only a cluster reads a change feed; a single node keeps no record.
        guard cluster != nil else { return }
        writeCount += 1
        controlWrites[id] = writeCount
    }

    /// Prepares the run's partial file from the job's earlier one (see `PartialFileTakeover`).
    func adoptPartialFile(id: String, lease: Lease, ownFile: Bool) async {
        // Files are touched only under a lease the store still honours.
        guard let cluster, (try? await StoreCalls.run({ try cluster.heartbeat(running: [lease]) }))?.isEmpty == true else {
            logger.warning("job \(id): lease \(lease.epoch) not confirmed; its partial file is left alone")
            return
        }
        let cacheDirectory = configuration.cacheDirectory
        let repository = self.repository
        let checkpoint = ownFile ? nil : (try? await StoreCalls.run { try repository.checkpoint(id: id) })
        let written = checkpoint?.writtenRanges ?? []
        logger.info(
            "job \(id): lease \(lease.epoch), taking over the partial file \(ownFile ? "by renaming it" : "by copying \(written.count) checkpointed range(s)")"
        )
        do {
            try await NIOThreadPool.singleton.runIfActive {
                try PartialFileTakeover.adopt(
                    cacheDirectory: cacheDirectory, id: id, epoch: lease.epoch, ownFile: ownFile, written: written
                )
            }
        } catch {
            logger.warning("job \(id): the partial file could not be taken over, the download starts over: \(error)")
        }
    }

    /// A run's lease was refused: the run stops at once, writing nothing more.
    func leaseLost(id: String, epoch: Int64) {
        guard let lease = runs[id].lease, lease.epoch == epoch else { return }
        logger.warning("job \(id): lease \(epoch) lost; another node owns the job now")
        runs[id].lease = nil
        leasesLostCounter.increment()
        stop(id)
        // In this actor's turn: bounded as a command's (the change feed reads it otherwise).
        StoreCallBudget.bounded { try? refresh(id) }
    }

    /// Reads one job back from the store (another node changed it) and absorbs it, or its
    /// removal.
    func refresh(_ id: String) throws {
        guard let cluster else { return }
        if let stored = try cluster.job(id: id) { absorb(stored) } else { absorbRemoval(id) }
    }

    /// Gives a stopped run's lease back (a run an edit stopped keeps it, to go on).
    func releaseLease(_ id: String) {
        guard let cluster, !runs[id].editing, runs.running(id) == nil, let lease = runs.takeLease(id) else { return }
        unsavedProgress[id] = nil
        // Not waited for: an unreleased lease lapses by itself.
        let logger = self.logger
        Task.detached {
            do { try await StoreCalls.run { try cluster.release(lease) } } catch { logger.warning("cannot release job \(id): \(error)") }
        }
    }

    /// Progress for the store, which renews the lease: kept (the latest per job) for the
    /// progress loop, which writes it about once a second, off this actor.
    func storeProgress(_ job: JobSnapshot) {
        guard cluster != nil, let lease = runs[job.id].lease else { return }
        unsavedProgress[job.id] = (job, lease)
    }

    /// Takes the progress to write now.
    private func takeProgress() -> [(job: JobSnapshot, lease: Lease)] {
        guard storeAnswers, !isShuttingDown else { return [] }
        defer { unsavedProgress = [:] }
        return Array(unsavedProgress.values)
    }

    /// Writes the progress of this node's runs, then stops those whose lease the store
    /// refused.
    func saveProgress() async {
        // Cancelled, the cluster's loop is ending (a shutdown): it writes nothing more.
        guard let cluster, !Task.isCancelled else { return }
        let runs = takeProgress()
        guard !runs.isEmpty else { return }
        do {
            // Every run's progress in one transaction.
            let refused = Set(try await StoreCalls.run { try cluster.saveProgress(runs) })
            for (job, lease) in runs where refused.contains(job.id) { leaseLost(id: job.id, epoch: lease.epoch) }
        } catch {
            logger.warning("cannot save the progress of \(runs.count) job(s): \(error)")
        }
    }

    // MARK: What other nodes changed

    /// Reads what changed since the last read (everything when `full`) and absorbs it.
    ///
    /// Read on the store's threads while this actor goes on, one read at a time (a later
    /// read absorbed before an earlier one would be taken back by it; asks meanwhile are
    /// folded into one more read). A row this node wrote again during a read is not taken
    /// from it: it is read again on its own at the next read, and the cursor moves on.
    func synchronize(full: Bool) async {
        guard cluster != nil, storeAnswers, !isShuttingDown else { return }
        guard !synchronizing else {
            syncAgain = true
            syncAgainFull = syncAgainFull || full
            return
        }
        synchronizing = true
        var full = full
        while true {
            await readChanges(full: full)
            guard syncAgain, !isShuttingDown else { break }
            full = syncAgainFull
            syncAgain = false
            syncAgainFull = false
        }
        synchronizing = false
    }

    private func readChanges(full: Bool) async {
        guard let cluster, storeAnswers, !Task.isCancelled else { return }
        let since = full ? nil : cursor
        let writesBefore = writeCount
        let recheck = Array(toRecheck)
        toRecheck = []
        let countsMark = storedCounts.readStart
        let changes: ClusterChanges
        let rechecked: [(id: String, row: JobSnapshot?)]
        do {
            changes = try await StoreCalls.run { try cluster.changes(since: since) }
            rechecked = try await StoreCalls.run { try recheck.map { ($0, try cluster.job(id: $0)) } }
        } catch {
            toRecheck.formUnion(recheck)
            logger.warning("cannot read the cluster's changes: \(error)")
            return
        }
        StoreCallBudget.bounded {
            absorb(changes, rechecked: rechecked, writesBefore: writesBefore, countsMark: countsMark)
        }
    }

    private func absorb(_ changes: ClusterChanges, rechecked: [(id: String, row: JobSnapshot?)], writesBefore: Int, countsMark: Int) {
        let newer = { (id: String) in (self.controlWrites[id] ?? 0) > writesBefore || self.unrecordedRuns[id] != nil }
        cursor = changes.cursor
        // One read at a time: nothing older than this read's start is needed any more.
        if controlWrites.count > 10_000 { controlWrites = controlWrites.filter { $0.value > writesBefore } }
        if let stored = changes.settings, stored != settings, settingsWritten <= writesBefore {
            settings = stored
            queueLimiter.setRate(stored.limitRate)
        }
        // What this read's rows let go, its counts have (one snapshot); rows read again on
        // their own come from another.
        absorbingRead = true
        for job in changes.jobs {
            if newer(job.id) { toRecheck.insert(job.id) } else { absorb(job) }
        }
        absorbingRead = false
        for (id, row) in rechecked {
            if newer(id) {
                toRecheck.insert(id)
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
                if shownEnds.isNewRemoval(id) { events.publish(.removed(id: id)) }
            } else if newer(id) {
                toRecheck.insert(id)
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
                toRecheck.formUnion(absent)
                syncAgain = true
            }
        }
        jobs.setStoredOnly(
            storedCounts.counts(
                store: changes.counts, held: jobs.heldCounts(), mark: countsMark,
                rows: Dictionary(changes.jobs.map { ($0.id, $0.state) }, uniquingKeysWith: { $1 }), removed: Set(changes.removed)
            )
        )
        // Past the reads' overlap, a finished row shown is not seen again unless it changed.
        shownEnds.forgetOld()
        schedule()
        scheduleWakeUp()
    }

    /// One job as another node (or this one) left it in the store. A node holds live jobs
    /// only: a finished one is shown, then let go (its state kept when a live job waits
    /// for it).
    func absorb(_ stored: JobSnapshot) {
        // A create this node answered 503: its late row is removed, never shown.
        guard abandonedCreates[stored.id] == nil else { return }
        guard let local = jobs[stored.id] else {
            guard stored.state.isLive else {
                if finishedDependencies[stored.id] != nil || jobs.isWaitedFor(stored.id) {
                    finishedDependencies[stored.id] = stored.state
                }
                // Reads overlap by 2 s, so the same row comes two or three times: shown once.
                if shownEnds.isNew(stored) { events.publish(.job(stored)) }
                return
            }
            // Held only once what it waits for is known: unknown, it would look deleted.
            guard (try? readDependencyStates(stored.after)) == true else {
                toRecheck.insert(stored.id)
                return
            }
            jobs.insertByAge(stored)
            events.publish(.job(stored))
            return
        }
        defer { letGoIfFinished(stored.id) }
        var row = stored
        row.waitingFor = local.waitingFor  // computed here, not stored
        if runs[row.id].lease != nil || runs.running(row.id) != nil {
            // Still running here as far as the store says (an edit that stopped the run for
            // a moment holds its lease too): its own progress is newer than the row's.
            // Otherwise paused, deleted or taken back elsewhere: the run stops.
            guard row.state == .running, row.node == nodeName else {
                stop(row.id)
                return replace(local, with: row)
            }
            row.takeRunFields(from: local)
            if row.limitRate != local.limitRate { runs[row.id].limiter?.setRate(row.limitRate) }
            if row.url != local.url || row.headers != local.headers || row.connections != local.connections
                || row.proxy != local.proxy || row.requestedFilename != local.requestedFilename
            {
                // Changed under a running download: it goes back to the queue, after its
                // checkpoint, and starts again under the new values.
                jobs[row.id] = row
                return sendBack(row.id, reason: "it was edited on another node")
            }
        }
        replace(local, with: row)
    }

    private func replace(_ local: JobSnapshot, with row: JobSnapshot) {
        // Finished elsewhere, with no run here: its limiter, retry count and progress clock go.
        if !row.state.isLive, runs.slot(row.id) == nil, runs[row.id].lease == nil, !runs[row.id].editing {
            _ = runs.remove(row.id)
        }
        guard row != local else { return }
        jobs[row.id] = row
        events.publish(.job(row))
        // Let go once finished: the reads' overlap brings the row again, not to be shown again.
        if !row.state.isLive { shownEnds.shown(row) }
    }

    func absorbRemoval(_ id: String) {
        stop(id)
        jobs[id] = nil
        // Everything kept about it goes; a run stopped here ends superseded.
        _ = runs.remove(id)
        events.publish(.removed(id: id))
        // The deleting node removed the partial files it can see; these may be on this
        // node's own disk.
        removePartialFiles(id)
    }

    func removePartialFiles(_ id: String) {
        for path in PartialFileTakeover.all(cacheDirectory: configuration.cacheDirectory, id: id) { unlink(path) }
    }

    // MARK: The node's loops

    /// Heartbeats, lease renewals, rescue, and the change feed, until cancelled. Started
    /// with the service when the store is a cluster's.
    public func runCluster() async {
        guard let cluster else { return }
        let signals = cluster.signals()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [weak self] in
                for await signal in signals {
                    guard let self else { return }
                    await self.signalled(signal)
                }
            }
            group.addTask { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    guard let self, !Task.isCancelled else { return }
                    await self.saveProgress()
                }
            }
            group.addTask { [weak self] in
                var lastFull = ContinuousClock.now
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    guard let self, !Task.isCancelled else { return }
                    let full = ContinuousClock.now - lastFull >= .seconds(30)
                    if full { lastFull = .now }
                    await self.synchronize(full: full)
                }
            }
            let interval = Self.heartbeatInterval(lease: cluster.leaseDuration)
            group.addTask { [weak self] in
                while !Task.isCancelled {
                    guard let self else { return }
                    await self.beat()
                    try? await Task.sleep(for: interval)
                }
            }
            await group.waitForAll()
        }
    }

    func signalled(_ signal: ClusterSignal) async {
        guard !isShuttingDown else { return }
        switch signal {
        case .job:
            await synchronize(full: false)
        case .resync:
            await synchronize(full: true)
        }
    }

    /// One heartbeat: this node alive, its leases renewed (any not renewed is lost), then
    /// the rescue of other nodes' expired leases, if this node wins the lock.
    ///
    /// The store is asked on its own threads while this actor goes on. Runs that ended while
    /// it did not answer are recorded first, before a rescue could take them back.
    func beat() async {
        runningGauge.record(runs.runningCount)
        guard let cluster, !isShuttingDown, storeAnswers, !Task.isCancelled else { return }
        // In the actor's turn after each call: bounded as a command's.
        await StoreCallBudget.bounded { await recordEndedRuns() }
        let held = runs.leases
        do {
            let lost = try await StoreCalls.run { try cluster.heartbeat(running: held) }
            for id in lost { if let lease = runs[id].lease, held.contains(lease) { leaseLost(id: id, epoch: lease.epoch) } }
            let rescued = try await StoreCalls.run { try cluster.rescue(staleAfter: cluster.leaseDuration) }
            if !rescued.isEmpty {
                logger.notice("requeued \(rescued.count) job(s) whose node stopped renewing its lease: \(rescued.joined(separator: ", "))")
                rescuedCounter.increment(by: Int64(rescued.count))
                await synchronize(full: false)
            }
        } catch {
            logger.warning("heartbeat failed: \(error)")
        }
        await removeAbandonedCreates()
    }

    /// Removes the rows of creates answered 503 (`abandonedCreates`), in case their insert
    /// committed after the answer: again at every heartbeat for a minute, since a `COMMIT`
    /// the node gave up on may land later still. Nothing was told of them, so no webhook is.
    func removeAbandonedCreates() async {
        let repository = self.repository
        for (id, since) in abandonedCreates {
            do {
                try await StoreCalls.run { try repository.delete(id: id, deliveries: []) }
            } catch {
                return
            }
            if ContinuousClock.now - since > .seconds(60) { abandonedCreates[id] = nil }
        }
    }

    /// Records the outcomes of runs that ended while the store did not answer; one the store
    /// took back meanwhile (another node has it now) is read again.
    func recordEndedRuns() async {
        guard let cluster else { return }
        for (id, ended) in unrecordedRuns {
            do {
                let recorded = try await StoreCalls.run { try cluster.finishRun(ended.job, lease: ended.lease) }
                unrecordedRuns[id] = nil
                noteControlWrite(id)
                if !recorded {
                    leasesLostCounter.increment()
                    try? refresh(id)
                } else if ended.job.state == .completed {
                    webhooks?.record(.completed, job: ended.job)
                } else if ended.job.state == .failed {
                    webhooks?.record(.failed, job: ended.job)
                    failForDependency(waiting(for: id).map { ($0, DependencyCascade.failureReason(of: id)) })
                }
                // Recorded: a finished job leaves the table.
                letGoIfFinished(id)
                schedule()
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
