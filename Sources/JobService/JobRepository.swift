public import DownloadEngine
public import SluiceCore

/// Durable jobs and their download checkpoints. The scheduler talks to this protocol; the
/// SQLite implementation is `SQLiteJobRepository`.
///
/// Calls are synchronous on purpose: a pause checkpoints from a cancelled task, and an
/// async database call would refuse to run there.
public protocol JobRepository: Sendable {
    /// Every job, oldest first (loaded once at start; the scheduler keeps them in memory).
    func allJobs() throws -> [JobSnapshot]
    func insert(_ job: JobSnapshot) throws
    func update(_ job: JobSnapshot) throws
    func delete(id: String) throws
    func checkpoint(id: String) throws -> DownloadCheckpoint?
    /// Saves a checkpoint and the bytes it covers in one transaction.
    func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, id: String) throws
}

/// The engine's checkpoint protocol for one job, on the job store.
public struct JobCheckpointStore: CheckpointStore {
    let repository: any JobRepository
    let id: String

    public init(repository: any JobRepository, id: String) {
        self.repository = repository
        self.id = id
    }

    public func load() async throws -> DownloadCheckpoint? { try repository.checkpoint(id: id) }
    public func save(_ checkpoint: DownloadCheckpoint) async throws { try repository.saveCheckpoint(checkpoint, id: id) }
    public func remove() async throws { try repository.saveCheckpoint(nil, id: id) }
}
