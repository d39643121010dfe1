import DownloadEngine
import Foundation
import NIOPosix
import SluiceCore

/// A cluster run's checkpoints: every save is fenced by the run's lease. A refused save
/// tells the scheduler and throws `LeaseLost`, which stops the download before it truncates
/// or places anything.
struct FencedCheckpointStore: CheckpointStore {
    let store: any ClusterStore
    /// Commits every run's checkpoints together (group commit).
    let writer: CheckpointWriter
    let lease: Lease
    let onLost: @Sendable () async -> Void

    /// Reading needs no lease.
    func load() async throws -> DownloadCheckpoint? {
        try await JobCheckpointStore(repository: store, id: lease.jobID).load()
    }

    func save(_ checkpoint: DownloadCheckpoint) async throws { try await fenced(checkpoint) }

    func remove() async throws { try await fenced(nil) }

    private func fenced(_ checkpoint: DownloadCheckpoint?) async throws {
        guard try await writer.save(checkpoint, lease: lease) else {
            await onLost()
            throw LeaseLost()
        }
    }
}
