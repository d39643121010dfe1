public import SluiceCore

/// What the HTTP API asks of the job service (docs/api.md, "Routes" and "Events").
/// `JobScheduler` is the implementation; the API knows only this protocol, so its routes can be
/// tested in-process against any service, and the service can change (a cluster of them, say)
/// without the routes knowing.
public protocol JobService: Sendable {
    /// Creates a job, or with an idempotency key already used in the last day, returns the
    /// job it made (`replayed`).
    func create(_ request: CreateJobRequest, idempotencyKey: String?) async throws -> (job: JobSnapshot, replayed: Bool)
    /// Makes every job of a batch, or none (one refused refuses the batch, naming its place).
    func createAll(_ requests: [CreateJobRequest]) async throws -> [JobSnapshot]
    /// A job, live from memory or finished from the store (which may not answer: 503).
    func job(id: String) async throws -> JobSnapshot?
    /// Newest first, optionally filtered by state, `limit` jobs after the job `after`, past
    /// the first `offset` of them.
    func list(states: Set<JobState>?, limit: Int, after: String?, offset: Int) async throws -> [JobSnapshot]
    /// Newest first, the queued jobs `hold` holds back (`GET /jobs?heldBy=`).
    func list(heldBy hold: JobHold, limit: Int, after: String?, offset: Int) async throws -> [JobSnapshot]
    func pause(id: String) async throws -> JobSnapshot
    func resume(id: String) async throws -> JobSnapshot
    func delete(id: String, deleteFile: Bool) async throws
    /// The current jobs (or the one job) and the changes after them, with no gap between.
    func subscribe(jobID: String?, lastEventID: String?) async throws -> JobSubscription
    func countsByState() async -> [JobState: Int]
    func edit(id: String, _ patch: JobPatch) async throws -> JobSnapshot
    func pauseAll(_ selection: JobSelection) async throws -> [JobSnapshot]
    func resumeAll(_ selection: JobSelection) async throws -> [JobSnapshot]
    func deleteAll(states: Set<JobState>, deleteFile: Bool) async throws -> Int
    func segments(id: String) async throws -> [JobSegment]
    func queue() async -> QueueStatus
    func updateQueue(_ patch: QueueSettingsPatch) async throws -> QueueStatus
    /// `GET /schedule`: the table and what it sets now.
    func scheduleStatus() async -> ScheduleStatus
    /// `PUT /schedule`: stored (for the whole cluster), then in effect at once.
    func replaceSchedule(_ schedule: Schedule) async throws -> ScheduleStatus
    /// A job's webhook deliveries, oldest first.
    func deliveries(id: String) async throws -> [WebhookDelivery]
    /// `GET /nodes`: the cluster's nodes (a single node lists itself).
    func nodes() async throws -> [NodeStatus]
}

extension JobScheduler: JobService {}

extension JobService {
    /// A page from the start (or from the cursor `after`).
    public func list(states: Set<JobState>?, limit: Int, after: String?) async throws -> [JobSnapshot] {
        try await list(states: states, limit: limit, after: after, offset: 0)
    }
}
