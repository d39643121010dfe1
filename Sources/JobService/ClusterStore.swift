public import Foundation
public import SluiceCore

/// A node's right to run one job: the node's name and the claim's epoch. Every write the
/// node makes for the job carries it, and the store refuses the write once the job was
/// claimed again (a new epoch) or taken back (no owner): the node has lost the job.
public struct Lease: Sendable, Equatable, Hashable {
    public var jobID: String
    public var owner: String
    public var epoch: Int64

    public init(jobID: String, owner: String, epoch: Int64) {
        self.jobID = jobID
        self.owner = owner
        self.epoch = epoch
    }
}

/// A job a node has just claimed, with what it needs to take over the partial file.
public struct ClaimedJob: Sendable, Equatable {
    public var job: JobSnapshot
    public var lease: Lease
    /// The node that last ran the job, if any: a node that ran it itself renames its own
    /// partial file; one that takes it from another node copies the checkpointed bytes.
    public var lastOwner: String?

    public init(job: JobSnapshot, lease: Lease, lastOwner: String?) {
        self.job = job
        self.lease = lease
        self.lastOwner = lastOwner
    }
}

/// What changed in the store since a cursor: rows to absorb, ids removed, the queue's
/// settings, the store's counts by state, and the cursor to ask from next time.
public struct ClusterChanges: Sendable {
    public var jobs: [JobSnapshot]
    public var removed: [String]
    public var settings: QueueSettings?
    public var cursor: ClusterCursor
    /// A full read: every live job is in `jobs`; a job held but absent from it has finished
    /// or gone.
    public var isFull: Bool
    /// How many jobs each state holds in the store, read with the changes (one snapshot).
    public var counts: [JobState: Int]

    public init(
        jobs: [JobSnapshot], removed: [String], settings: QueueSettings?, cursor: ClusterCursor, isFull: Bool,
        counts: [JobState: Int] = [:]
    ) {
        self.jobs = jobs
        self.removed = removed
        self.settings = settings
        self.cursor = cursor
        self.isFull = isFull
        self.counts = counts
    }
}

/// Where a node's reading of the store's changes stands, in the store's own clock.
public struct ClusterCursor: Sendable, Equatable {
    /// Seconds since 1970 on the database's clock.
    public var databaseTime: Double

    public init(databaseTime: Double) { self.databaseTime = databaseTime }
}

/// A node as `GET /nodes` lists it.
public struct NodeStatus: Sendable, Equatable {
    public var name: String
    public var startedAt: Date
    public var lastHeartbeat: Date
    /// Seconds since the heartbeat, on the database's clock.
    public var age: Double
    public var runningJobs: [String]

    public init(name: String, startedAt: Date, lastHeartbeat: Date, age: Double, runningJobs: [String]) {
        self.name = name
        self.startedAt = startedAt
        self.lastHeartbeat = lastHeartbeat
        self.age = age
        self.runningJobs = runningJobs
    }

    public var json: JSONValue {
        .object([
            ("name", .string(name)),
            ("startedAt", JSONValue(startedAt)),
            ("lastHeartbeat", JSONValue(lastHeartbeat)),
            ("heartbeatAge", .number(age)),
            ("runningJobs", .array(runningJobs.map { .string($0) })),
        ])
    }
}

/// What the listening connection tells: a job changed (sent in the transaction that
/// changed it), or the connection was lost and made again, so anything may have changed.
public enum ClusterSignal: Sendable, Equatable {
    case job(String)
    case resync
}

/// A job store shared by several nodes (PostgreSQL): claims, leases, fenced writes,
/// heartbeats and rescue, beside the single node's `JobRepository`.
///
/// Control writes (`update`, `insert`, `delete`: a user's pause, edit, delete on any node)
/// notify every node in their own transaction. Writes of a run (progress, checkpoints, its
/// outcome) are fenced by the run's lease and return false when the store refused them.
public protocol ClusterStore: JobRepository {
    /// This node's name (`--node-name`).
    var nodeName: String { get }
    /// How long a lease lasts without renewal.
    var leaseDuration: Duration { get }

    /// At start: this node's jobs left `running` by its previous process go back to `queued`.
    func recoverOwnJobs() async throws -> [String]
    /// Takes up to `limit` ready queued jobs, by priority then age, skipping rows other
    /// nodes are claiming, and leases them to this node with a new epoch.
    /// Ready jobs as of `now` (the node's clock: `startAt` and `Retry-After` are read
    /// against it), those the queue's holds let start (a closed window: only those that
    /// ignore the schedule).
    func claim(limit: Int, at now: Date, holds: QueueHolds) async throws -> [ClaimedJob]
    /// Progress of a run (at most once a second per job); renews its lease.
    func saveProgress(_ job: JobSnapshot, lease: Lease) async throws -> Bool
    /// The progress of several runs in one transaction; the ids whose lease was refused.
    func saveProgress(_ runs: [(job: JobSnapshot, lease: Lease)]) async throws -> [String]
    /// A run's checkpoint (nil removes it); renews its lease.
    func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, lease: Lease) async throws -> Bool
    /// Several runs' checkpoints in one transaction; whether each lease was honoured.
    func saveCheckpoints(_ writes: [(checkpoint: DownloadCheckpoint?, lease: Lease)]) async throws -> [Bool]
    /// How a run ended (completed, failed, back to the queue), and the lease given up.
    func finishRun(_ job: JobSnapshot, lease: Lease) async throws -> Bool
    /// Gives up a lease whose run stopped (a pause, a send-back, a shutdown).
    func release(_ lease: Lease) async throws
    /// A control write, made only while the row's state is still `expected` (another node
    /// may have finished the job meanwhile); false when it was not.
    func update(_ job: JobSnapshot, expectedState: JobState) async throws -> Bool
    /// Records this node alive and renews the leases of its runs; returns the ids of the
    /// jobs among them it has lost.
    func heartbeat(running: [Lease]) async throws -> [String]
    /// When this node wins the rescuer's advisory lock: requeues jobs whose lease expired or
    /// whose owner's heartbeat is older than `staleAfter`. Returns their ids.
    func rescue(staleAfter: Duration) async throws -> [String]
    /// Jobs changed and removed since `cursor` (every live job, with nil), with the store's
    /// counts by state, all in one snapshot.
    func changes(since cursor: ClusterCursor?) async throws -> ClusterChanges
    /// One job as stored, nil when it is gone.
    func job(id: String) async throws -> JobSnapshot?
    func nodes() async throws -> [NodeStatus]
    /// Notifications from other nodes, for as long as the store is open.
    func signals() -> AsyncStream<ClusterSignal>
    /// Stops heartbeating this node (it is shutting down) and closes the connections.
    func close(removingNode: Bool) async
}

extension ClusterStore {
    /// Ready jobs now, nothing held by the queue.
    public func claim(limit: Int) async throws -> [ClaimedJob] { try await claim(limit: limit, at: Date(), holds: QueueHolds()) }
}
