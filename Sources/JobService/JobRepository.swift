public import DownloadEngine
public import Foundation
public import SluiceCore

/// Durable jobs and their download checkpoints. The scheduler talks to this protocol; the
/// SQLite implementation is `SQLiteJobRepository`.
///
/// Calls are synchronous on purpose: a pause checkpoints from a cancelled task, and an
/// async database call would refuse to run there.
public protocol JobRepository: Sendable {
    /// Every job, oldest first (loaded once at start; the scheduler keeps them in memory).
    func allJobs() throws -> [JobSnapshot]
    /// Inserts a job; with a key, records that the key made it, in the same transaction, and
    /// forgets keys older than `IdempotencyKey.lifetime`.
    func insert(_ job: JobSnapshot, idempotencyKey: String?) throws
    /// The id of the job the key made since `since`, if any.
    func jobID(idempotencyKey: String, since: Date) throws -> String?
    /// The queue's settings as last changed, nil before the first change.
    func queueSettings() throws -> QueueSettings?
    func saveQueueSettings(_ settings: QueueSettings) throws
    func update(_ job: JobSnapshot) throws
    /// Removes a job and stores the deliveries that announce it (`removed`) in the same
    /// transaction: after a crash the job is either still there, unannounced, or gone and
    /// announced, never back after its removal was told.
    func delete(id: String, deliveries: [WebhookDelivery]) throws
    func checkpoint(id: String) throws -> DownloadCheckpoint?
    /// Saves a checkpoint and the bytes it covers in one transaction.
    func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, id: String) throws

    /// Stores new webhook deliveries (in one transaction) or a delivery's new state.
    func saveDeliveries(_ deliveries: [WebhookDelivery]) throws
    /// Deliveries still to be tried, soonest first.
    func pendingDeliveries() throws -> [WebhookDelivery]
    /// A job's deliveries, oldest first (they outlive the job: a `removed` event's does).
    func deliveries(jobID: String) throws -> [WebhookDelivery]
    /// The cheapest round trip to the store: it answers, or throws (`StoreHealth`).
    func ping() throws
}

extension JobRepository {
    public func insert(_ job: JobSnapshot) throws { try insert(job, idempotencyKey: nil) }
    public func delete(id: String) throws { try delete(id: id, deliveries: []) }
}

/// The engine's checkpoint protocol for one job, on the job store.
public struct JobCheckpointStore: CheckpointStore {
    let repository: any JobRepository
    let id: String

    public init(repository: any JobRepository, id: String) {
        self.repository = repository
        self.id = id
    }

    public func load() async throws -> DownloadCheckpoint? { try await Self.offLoop { try repository.checkpoint(id: id) } }
    public func save(_ checkpoint: DownloadCheckpoint) async throws {
        try await Self.offLoop { try repository.saveCheckpoint(checkpoint, id: id) }
    }
    public func remove() async throws { try await Self.offLoop { try repository.saveCheckpoint(nil, id: id) } }

    /// A store write waits for the disk (SQLite syncs its log) or the network: on the store's
    /// threads (`StoreCalls`), not on the data-plane loop the download runs on, whose other
    /// connections would wait with it.
    static func offLoop<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await StoreCalls.run(work)
    }
}
