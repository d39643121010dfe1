import Logging
import SluiceCore
import Synchronization

/// A cluster node's runs' progress on its way to the store: the latest of each run, kept as
/// runs report it and written about once a second off the runner, every run's in one
/// transaction (the write renews its lease). A run whose lease the store refused is told
/// to `leaseLost`, which stops it.
final class ClusterProgress: Sendable {
    private let cluster: any ClusterStore
    private let logger: Logger
    private let latest = Mutex<[String: (job: JobSnapshot, lease: Lease)]>([:])

    init(cluster: any ClusterStore, logger: Logger) {
        self.cluster = cluster
        self.logger = logger
    }

    /// The run's latest progress, written at the next `write`.
    func note(_ job: JobSnapshot, lease: Lease) {
        latest.withLock { $0[job.id] = (job, lease) }
    }

    /// The run's progress not written yet is not to be (its run ended, or its lease went).
    func forget(_ id: String) {
        _ = latest.withLock { $0.removeValue(forKey: id) }
    }

    /// Writes the progress noted since the last write, then tells `leaseLost` of the runs
    /// whose lease the store refused. Nothing once cancelled (the group shuts down).
    func write(leaseLost: @Sendable (String, Int64) async -> Void) async {
        guard !Task.isCancelled else { return }
        let runs = latest.withLock { latest in
            defer { latest = [:] }
            return Array(latest.values)
        }
        guard !runs.isEmpty else { return }
        do {
            let refused = Set(try await cluster.saveProgress(runs))
            for (job, lease) in runs where refused.contains(job.id) { await leaseLost(job.id, lease.epoch) }
        } catch {
            logger.warning("cannot save the progress of \(runs.count) job(s): \(error)")
        }
    }
}
