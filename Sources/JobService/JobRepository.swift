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
    /// One job, or nil when the store holds none by that id.
    func job(id: String) throws -> JobSnapshot?
    /// The live jobs (queued, running, paused), oldest first: all a start needs to hold.
    func liveJobs() throws -> [JobSnapshot]
    /// A page of the jobs in `states`, newest first (in the order they were made): `limit` of
    /// them, made before the job `before` when one is named. Nil when `before` names no job.
    /// Read from an index on (state, order), whatever the other states hold.
    func page(states: Set<JobState>, limit: Int, before: String?) throws -> [JobSnapshot]?
    /// How many jobs each state holds (a state with none may be missing).
    func countsByState() throws -> [JobState: Int]
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
    /// Removes several finished jobs and stores the deliveries that announce them, all in one
    /// transaction (a bulk delete of finished jobs a page at a time). A store shared by nodes
    /// removes only those still finished, and stores only their deliveries: another node may
    /// have resumed one since the page was read.
    func delete(ids: [String], deliveries: [WebhookDelivery]) throws
    func checkpoint(id: String) throws -> DownloadCheckpoint?
    /// Saves a checkpoint and the bytes it covers in one transaction.
    func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, id: String) throws
    /// Saves several jobs' checkpoints (nil clears one), in order, in one transaction: the
    /// runs of many jobs cost one commit (`CheckpointWriter`).
    func saveCheckpoints(_ writes: [CheckpointWrite]) throws

    /// Stores new webhook deliveries (in one transaction) or a delivery's new state.
    func saveDeliveries(_ deliveries: [WebhookDelivery]) throws
    /// Deliveries still to be tried, soonest first.
    func pendingDeliveries() throws -> [WebhookDelivery]
    /// A job's deliveries, oldest first (they outlive the job: a `removed` event's does).
    func deliveries(jobID: String) throws -> [WebhookDelivery]
    /// The cheapest round trip to the store: it answers, or throws (`StoreHealth`).
    func ping() throws
}

/// One job's checkpoint to save, or to clear (nil).
public struct CheckpointWrite: Sendable, Equatable {
    public var id: String
    public var checkpoint: DownloadCheckpoint?

    public init(id: String, checkpoint: DownloadCheckpoint?) {
        self.id = id
        self.checkpoint = checkpoint
    }
}

extension JobRepository {
    public func insert(_ job: JobSnapshot) throws { try insert(job, idempotencyKey: nil) }
    public func delete(id: String) throws { try delete(id: id, deliveries: []) }

    /// One removal after another (each with the deliveries that name its job); a store that
    /// can do better removes them together.
    public func delete(ids: [String], deliveries: [WebhookDelivery]) throws {
        for id in ids { try delete(id: id, deliveries: deliveries.filter { $0.jobID == id }) }
    }

    /// One save after another; a store that can do better commits them together.
    public func saveCheckpoints(_ writes: [CheckpointWrite]) throws {
        for write in writes { try saveCheckpoint(write.checkpoint, id: write.id) }
    }
}

/// The engine's checkpoint protocol for one job, on the job store: its saves go through the
/// service's `CheckpointWriter`, which commits every job's pending saves together.
public struct JobCheckpointStore: CheckpointStore {
    let repository: any JobRepository
    let writer: CheckpointWriter?
    let id: String

    /// With no writer, each save is a transaction of its own.
    public init(repository: any JobRepository, id: String, writer: CheckpointWriter? = nil) {
        self.repository = repository
        self.id = id
        self.writer = writer
    }

    public func load() async throws -> DownloadCheckpoint? { try await Self.offLoop { try repository.checkpoint(id: id) } }
    public func save(_ checkpoint: DownloadCheckpoint) async throws { try await write(checkpoint) }
    public func remove() async throws { try await write(nil) }

    private func write(_ checkpoint: DownloadCheckpoint?) async throws {
        if let writer { return try await writer.save(checkpoint, id: id) }
        try await Self.offLoop { [repository, id] in try repository.saveCheckpoint(checkpoint, id: id) }
    }

    /// A store write waits for the disk (SQLite syncs its log) or the network: on the store's
    /// threads (`StoreCalls`), not on the data-plane loop the download runs on, whose other
    /// connections would wait with it.
    static func offLoop<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await StoreCalls.run(work)
    }
}
