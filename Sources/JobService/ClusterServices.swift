import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// A cluster node's work beside its commands, each a service of the group, stopped in the
/// reverse of this order before the scheduler's own shutdown (docs/job-service.md,
/// "Services and shutdown"): the heartbeat (leases renewed, ended runs recorded), the
/// rescue of other nodes' expired leases, the change feed (what other nodes changed), and
/// the progress writer (this node's runs' bytes, about once a second).
enum ClusterServices {
    static func make(for scheduler: JobScheduler, cluster: any ClusterStore, progress: ClusterProgress) -> [any Service] {
        let beat = ClusterHeartbeat.interval(lease: cluster.leaseDuration)
        return [
            RepeatingWork(description: "ClusterProgressWriter", interval: .seconds(1), waitsFirst: true) { [weak scheduler] in
                guard let scheduler, scheduler.storeAnswers else { return }
                await progress.write { [weak scheduler] id, epoch in await scheduler?.leaseLost(id: id, epoch: epoch) }
            },
            ClusterChangeFeed(scheduler: scheduler, signals: cluster.signals()),
            RepeatingWork(description: "ClusterRescuer", interval: beat, waitsFirst: true) { [weak scheduler] in
                guard let scheduler else { return }
                await ClusterHeartbeat.rescue(on: scheduler)
            },
            RepeatingWork(description: "ClusterHeartbeat", interval: beat, waitsFirst: false) { [weak scheduler] in
                guard let scheduler else { return }
                await ClusterHeartbeat.beat(on: scheduler)
            },
        ]
    }
}

/// Work done every `interval` until the group shuts down (or the task is cancelled); the
/// first time at once, or after one interval when `waitsFirst`.
struct RepeatingWork: Service, CustomStringConvertible {
    let description: String
    let interval: Duration
    let waitsFirst: Bool
    let work: @Sendable () async -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            if waitsFirst { try? await Task.sleep(for: interval) }
            while !Task.isCancelled {
                await work()
                try? await Task.sleep(for: interval)
            }
        }
    }
}

/// The leases of a node's stopped runs, given back to the store as they come (the job is free
/// for any node at once), not waited for by the runner: a lease not given back lapses by
/// itself.
final class LeaseReleaser: Service, Sendable, CustomStringConvertible {
    var description: String { "ClusterLeaseReleaser" }
    private let cluster: any ClusterStore
    private let logger: Logger
    private let queue = Mutex<[Lease]>([])
    private let wake = WakeSignal()

    init(cluster: any ClusterStore, logger: Logger) {
        self.cluster = cluster
        self.logger = logger
    }

    func release(_ lease: Lease) {
        queue.withLock { $0.append(lease) }
        wake.signal()
    }

    /// Until the group shuts down (after the downloads, whose stopped runs give their
    /// leases back here), then what is left, once.
    func run() async {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                await releaseQueued()
                await wake.wait(upTo: nil) { try await Task.sleep(for: $0) }
            }
        }
        // In a task a cancellation of this one does not reach (a store call would refuse to
        // start in a cancelled task).
        await Task { await self.releaseQueued() }.value
    }

    private func releaseQueued() async {
        let leases = queue.withLock { queue in
            defer { queue = [] }
            return queue
        }
        for lease in leases {
            do { try await cluster.release(lease) } catch { logger.warning("cannot release job \(lease.jobID): \(error)") }
        }
    }
}

/// A cluster node's membership, last of the node's services to stop: the node leaves the
/// cluster (its row removed, so that the others requeue what it held at once) and its store
/// closes only after everything that writes to the store has stopped.
struct ClusterMembership: Service, CustomStringConvertible {
    var description: String { "ClusterMembership" }
    let scheduler: JobScheduler

    func run() async {
        // A cancellation (the group failing) leaves too.
        try? await gracefulShutdown()
        await Task { await scheduler.leaveCluster() }.value
    }
}
