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
    /// `GET /nodes`: the cluster's nodes, or this one alone.
    public func nodes() async throws -> [NodeStatus] {
        if let cluster { return try await cluster.nodes() }
        let runningJobs = order.filter { runs.running($0) != nil }
        return [NodeStatus(name: nodeName, startedAt: startedAt, lastHeartbeat: Date(), age: 0, runningJobs: runningJobs)]
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

    // MARK: What other nodes changed (read by `ClusterChangeFeed`)

    /// One job as another node (or this one) left it in the store. A node holds live jobs
    /// only: a finished one is shown, then let go (its state kept when a live job waits
    /// for it).
    func absorb(_ row: JobSnapshot) {
        // A create this node answered 503: its late row is removed, never shown.
        guard book.abandonedCreates[row.id] == nil else { return }
        // What holds it is not stored: worked out here, as for this node's own changes.
        var stored = row
        stored.heldBy = holds.heldBy(stored, now: configuration.clock.now())
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
            guard DependencyStates.known(stored.after, on: self) else {
                DependencyStates.askStore(about: stored.after, on: self)
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

    /// A claimed job's partial file, taken over from the node that ran it last
    /// (`PartialFileTakeover`).
    func takeOverPartialFile(id: String, lease: Lease, ownFile: Bool) async {
        guard let cluster else { return }
        await PartialFileTakeover.adopt(
            id: id, lease: lease, ownFile: ownFile, cluster: cluster, repository: repository,
            cacheDirectory: configuration.cacheDirectory, logger: logger)
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

    /// The disk's watch (`DiskSpace`) and the schedule's ticks (`ScheduleService`), for the group.
    public nonisolated var queueServices: [any Service] {
        [ScheduleService(node: self, clock: configuration.clock), DiskSpace.service(for: self)]
    }

    /// A cluster node's membership (`ClusterMembership`), first in the group so that it stops
    /// last: none for a single node.
    public nonisolated var clusterMembership: [any Service] { cluster == nil ? [] : [ClusterMembership(scheduler: self)] }
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
