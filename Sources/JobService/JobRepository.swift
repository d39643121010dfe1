public import DownloadEngine
public import Foundation
public import SluiceCore

/// Durable jobs and their download checkpoints. The scheduler talks to this protocol; the
/// SQLite implementation is `SQLiteJobRepository`.
///
/// Every call is async: it waits for the store without holding a thread (GRDB's async
/// access for SQLite, `PostgresClient`'s pool for PostgreSQL), so a stalled store holds the
/// tasks that wait on it and nothing else.
public protocol JobRepository: Sendable {
    /// Every job, oldest first (loaded once at start; the scheduler keeps them in memory).
    func allJobs() async throws -> [JobSnapshot]
    /// One job, or nil when the store holds none by that id.
    func job(id: String) async throws -> JobSnapshot?
    /// The live jobs (queued, running, paused), oldest first: all a start needs to hold.
    func liveJobs() async throws -> [JobSnapshot]
    /// A page of the jobs in `states`, newest first (in the order they were made): `limit` of
    /// them, made before the job `before` when one is named. Nil when `before` names no job.
    /// Read from an index on (state, order), whatever the other states hold.
    func page(states: Set<JobState>, limit: Int, before: String?) async throws -> [JobSnapshot]?
    /// The same page past its first `offset` jobs (the dashboard's list, scrolled far): the
    /// rows are counted along the order's index, `limit` of them read.
    func page(states: Set<JobState>, limit: Int, before: String?, offset: Int) async throws -> [JobSnapshot]?
    /// How many jobs each state holds (a state with none may be missing).
    func countsByState() async throws -> [JobState: Int]
    /// Inserts a job; with a key, records that the key made it from the request whose
    /// fingerprint is `request`, in the same transaction, and forgets keys older than
    /// `IdempotencyKey.lifetime`.
    func insert(_ job: JobSnapshot, idempotencyKey: String?, request: String?) async throws
    /// Inserts several jobs in one transaction: all of them or none (a batch of creates).
    func insert(_ jobs: [JobSnapshot]) async throws
    /// The job the key made since `since`, if any, and the fingerprint of the request that
    /// made it (nil for a key stored before fingerprints were).
    func idempotentCreate(key: String, since: Date) async throws -> IdempotentCreate?
    /// The queue's settings as last changed, nil before the first change.
    func queueSettings() async throws -> QueueSettings?
    func saveQueueSettings(_ settings: QueueSettings) async throws
    /// The schedule (`PUT /schedule`) as its JSON text, nil before the first is stored.
    func scheduleText() async throws -> String?
    func saveScheduleText(_ text: String) async throws
    /// The quotas and the bytes counted against them (`QuotaLedger.stored`), nil before any.
    func quotaText() async throws -> String?
    /// Stores `update(the stored text)` in one transaction, and returns it: the nodes of a
    /// cluster add their counts to the same ledger, none overwriting another's.
    func updateQuotaText(_ update: @escaping @Sendable (String?) -> String) async throws -> String
    func update(_ job: JobSnapshot) async throws
    /// Several jobs' changes, and the webhook deliveries that tell of them, in one
    /// transaction (`JobWrites` batches what the service decided).
    func update(_ jobs: [JobSnapshot], deliveries: [WebhookDelivery]) async throws
    /// Removes a job and stores the deliveries that announce it (`removed`) in the same
    /// transaction: after a crash the job is either still there, unannounced, or gone and
    /// announced, never back after its removal was told.
    func delete(id: String, deliveries: [WebhookDelivery]) async throws
    /// Removes several finished jobs and stores the deliveries that announce them, all in one
    /// transaction (a bulk delete of finished jobs a page at a time). A store shared by nodes
    /// removes only those still finished, and stores only their deliveries: another node may
    /// have resumed one since the page was read.
    func delete(ids: [String], deliveries: [WebhookDelivery]) async throws
    func checkpoint(id: String) async throws -> DownloadCheckpoint?
    /// Saves a checkpoint and the bytes it covers in one transaction.
    func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, id: String) async throws
    /// Saves several jobs' checkpoints (nil clears one), in order, in one transaction: the
    /// runs of many jobs cost one commit (`CheckpointWriter`).
    func saveCheckpoints(_ writes: [CheckpointWrite]) async throws

    /// Stores new webhook deliveries (in one transaction) or a delivery's new state.
    func saveDeliveries(_ deliveries: [WebhookDelivery]) async throws
    /// Every delivery still to be tried, soonest first, none claimed (tests and tools; the
    /// dispatcher reads by receiver, `dueDeliveries`).
    func pendingDeliveries() async throws -> [WebhookDelivery]
    /// The receivers (`WebhookDelivery.receiver`) that have deliveries still to be tried.
    func deliveryReceivers() async throws -> [String]
    /// At most `limit` of `receiver`'s deliveries due at `now`, soonest first, none of the
    /// jobs in `excludingJobs` (their earlier delivery is under way): read by an index,
    /// whatever the backlog. A cluster's store claims them for this node.
    func dueDeliveries(receiver: String, now: Date, excludingJobs: [String], limit: Int) async throws -> [WebhookDelivery]
    /// When `receiver`'s next delivery is due (one claimed by another node is not this
    /// node's); nil when it has none left to try.
    func nextDeliveryAttempt(receiver: String) async throws -> Date?
    /// Removes every delivery of a deleted job once none is left to try: nothing of it (its
    /// bodies held its URL) stays once its `removed` call is delivered or given up.
    func forgetDeliveries(ofRemovedJob jobID: String) async throws
    /// Removes the deliveries delivered or given up that were made before `cutoff` (the
    /// retention); returns how many.
    func forgetDeliveries(settledBefore cutoff: Date) async throws -> Int
    /// A job's deliveries, oldest first (they outlive the job: a `removed` event's does).
    func deliveries(jobID: String) async throws -> [WebhookDelivery]
    /// The cheapest round trip to the store: it answers, or throws (`StoreHealth`).
    func ping() async throws
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

/// What an `Idempotency-Key` made: the job, and the fingerprint of the request that made it.
public struct IdempotentCreate: Sendable, Equatable {
    public var jobID: String
    public var request: String?

    public init(jobID: String, request: String?) {
        self.jobID = jobID
        self.request = request
    }
}

extension JobRepository {
    public func insert(_ job: JobSnapshot) async throws { try await insert(job, idempotencyKey: nil, request: nil) }
    public func insert(_ job: JobSnapshot, idempotencyKey: String?) async throws {
        try await insert(job, idempotencyKey: idempotencyKey, request: nil)
    }
    /// The id of the job the key made since `since`, if any.
    public func jobID(idempotencyKey: String, since: Date) async throws -> String? {
        try await idempotentCreate(key: idempotencyKey, since: since)?.jobID
    }
    public func delete(id: String) async throws { try await delete(id: id, deliveries: []) }

    /// One removal after another (each with the deliveries that name its job); a store that
    /// can do better removes them together.
    public func delete(ids: [String], deliveries: [WebhookDelivery]) async throws {
        for id in ids { try await delete(id: id, deliveries: deliveries.filter { $0.jobID == id }) }
    }

    /// One save after another; a store that can do better commits them together.
    public func saveCheckpoints(_ writes: [CheckpointWrite]) async throws {
        for write in writes { try await saveCheckpoint(write.checkpoint, id: write.id) }
    }

    /// One update after another, then the deliveries; a store that can do better commits
    /// them together.
    public func update(_ jobs: [JobSnapshot], deliveries: [WebhookDelivery]) async throws {
        for job in jobs { try await update(job) }
        if !deliveries.isEmpty { try await saveDeliveries(deliveries) }
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

    public func load() async throws -> DownloadCheckpoint? { try await repository.checkpoint(id: id) }
    public func save(_ checkpoint: DownloadCheckpoint) async throws { try await write(checkpoint) }
    public func remove() async throws { try await write(nil) }

    private func write(_ checkpoint: DownloadCheckpoint?) async throws {
        if let writer { return try await writer.save(checkpoint, id: id) }
        try await repository.saveCheckpoint(checkpoint, id: id)
    }
}
