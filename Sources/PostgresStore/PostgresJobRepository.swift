public import Foundation
public import JobService
public import Logging
public import SluiceTLS
import NIOCore
import PostgresNIO
public import SluiceCore

/// Jobs in PostgreSQL, shared by every node of a cluster: the `JobRepository` a single node
/// needs, and the claims, leases, heartbeats and notifications of `ClusterStore`.
///
/// Times of the API (`createdAt`…) are seconds since 1970 as the nodes saw them, as in
/// SQLite; leases and heartbeats use the database's clock alone, so nodes' clocks never
/// decide who owns a job.
public final class PostgresJobRepository: ClusterStore {
    public let nodeName: String
    public let leaseDuration: Duration
    let connections: PostgresConnections
    let listener: PostgresListener
    let logger: Logger

    /// Connects, applies migrations, and records this node alive, its pool of connections
    /// running in a task of its own until `close()` (a short command, a test).
    public convenience init(
        location: PostgresLocation, nodeName: String, leaseDuration: Duration = .seconds(15),
        timeout: Duration = .seconds(10), trust: TLSTrust = .system, logger: Logger
    ) async throws {
        let connections = try PostgresConnections.make(
            location: location, timeout: timeout, idleInTransaction: leaseDuration, trust: trust, runsItself: true, logger: logger
        )
        try await self.init(connections: connections, nodeName: nodeName, leaseDuration: leaseDuration, logger: logger)
    }

    /// The same on a pool its owner runs (`sluice serve`: beside its services, until they
    /// have all stopped); made with the lease as its `idleInTransaction`.
    public convenience init(pool: PostgresPool, nodeName: String, leaseDuration: Duration, logger: Logger) async throws {
        try await self.init(connections: pool.connections, nodeName: nodeName, leaseDuration: leaseDuration, logger: logger)
    }

    init(connections: PostgresConnections, nodeName: String, leaseDuration: Duration, logger: Logger) async throws {
        self.nodeName = nodeName
        self.leaseDuration = leaseDuration
        self.logger = logger
        self.connections = connections
        listener = PostgresListener(connections: connections, channel: PostgresSchema.channel, logger: logger)
        do {
            try await connections.checkReachable()
            let applied = try await PostgresSchema.migrate(connections)
            if !applied.isEmpty { logger.info("PostgreSQL store migrated to version \(applied.last!)") }
            _ = try await connections.run(
                """
                INSERT INTO node (name, started_at, last_seen) VALUES (\(nodeName), now(), now())
                ON CONFLICT (name) DO UPDATE SET started_at = now(), last_seen = now()
                """
            )
        } catch {
            connections.close()
            throw error
        }
    }

    var leaseSeconds: Double { leaseDuration / .seconds(1) }

    // MARK: JobRepository

    public func ping() async throws {
        _ = try await connections.run("SELECT 1")
    }

    public func allJobs() async throws -> [JobSnapshot] {
        try await connections.withConnection { [self] connection in try await allJobs(on: connection) }
    }

    func allJobs(on connection: PostgresConnection) async throws -> [JobSnapshot] {
        try await connections.run("SELECT \(unescaped: Self.jobColumns) FROM job ORDER BY sequence", on: connection).rows.map(Self.snapshot)
    }

    public func liveJobs() async throws -> [JobSnapshot] {
        try await connections.withConnection { [self] connection in try await liveJobs(on: connection) }
    }

    func liveJobs(on connection: PostgresConnection) async throws -> [JobSnapshot] {
        try await connections.run(
            """
            SELECT \(unescaped: Self.jobColumns) FROM job WHERE state IN ('queued', 'running', 'paused') ORDER BY sequence
            """, on: connection
        ).rows.map(Self.snapshot)
    }

    /// A page's upper bound: the sequence of the job `before` (nil when it names none), or
    /// past every job.
    private func sequenceBound(before: String?, on connection: PostgresConnection) async throws -> Int64? {
        guard let before else { return Int64.max }
        guard let row = try await connections.run("SELECT sequence FROM job WHERE id = \(before)", on: connection).rows.first else {
            return nil
        }
        return try row.decode(Int64.self)
    }

    public func page(states: Set<JobState>, limit: Int, before: String?) async throws -> [JobSnapshot]? {
        try await page(states: states, limit: limit, before: before, offset: 0)
    }

    public func page(states: Set<JobState>, limit: Int, before: String?, offset: Int) async throws -> [JobSnapshot]? {
        let limit = max(0, limit)
        return try await connections.withConnection { [self] connection in
            guard var bound = try await sequenceBound(before: before, on: connection) else { return nil }
            if offset > 0 {
                // The first job of the page, counted in the (state, sequence) index alone (an
                // index-only scan): no row is read until the page's own.
                let names = states.map(\.rawValue).sorted()
                let first = try await connections.run(
                    """
                    SELECT sequence FROM job WHERE state = ANY(\(names)) AND sequence < \(bound)
                    ORDER BY sequence DESC LIMIT 1 OFFSET \(offset)
                    """, on: connection
                ).rows.first
                guard let first else { return [] }
                bound = try first.decode(Int64.self) + 1
            }
            // One state at a time from the (state, sequence) index, merged here.
            var found: [(sequence: Int64, job: JobSnapshot)] = []
            for state in states {
                let rows = try await connections.run(
                    """
                    SELECT \(unescaped: Self.jobColumns), sequence FROM job
                    WHERE state = \(state.rawValue) AND sequence < \(bound) ORDER BY sequence DESC LIMIT \(limit)
                    """, on: connection
                ).rows
                for row in rows {
                    found.append((try row.makeRandomAccess()["sequence"].decode(Int64.self), try Self.snapshot(row)))
                }
            }
            return found.sorted { $0.sequence > $1.sequence }.prefix(limit).map(\.job)
        }
    }

    /// From the counts the store keeps as jobs change (`job_count`): a few rows, whatever
    /// the number of jobs.
    public func countsByState() async throws -> [JobState: Int] {
        try await connections.withConnection { [self] connection in try await countsByState(on: connection) }
    }

    func countsByState(on connection: PostgresConnection) async throws -> [JobState: Int] {
        var counts: [JobState: Int] = [:]
        for row in try await connections.run("SELECT state, SUM(n)::bigint FROM job_count GROUP BY state", on: connection).rows {
            let (state, count) = try row.decode((String, Int64).self)
            if let state = JobState(rawValue: state) { counts[state, default: 0] += Int(count) }
        }
        return counts
    }

    public func insert(_ job: JobSnapshot, idempotencyKey: String?, request: String?) async throws {
        try await connections.transaction { [self] connection in
            if let idempotencyKey {
                // Dated with the job it made, on the service's clock (as `jobID(since:)` is asked).
                let now = job.createdAt.timeIntervalSince1970
                _ = try await connections.run(
                    "DELETE FROM idempotency_key WHERE created_at < \(now - IdempotencyKey.lifetime)", on: connection)
                _ = try await connections.run(
                    """
                    INSERT INTO idempotency_key (key, job_id, created_at, request)
                    VALUES (\(idempotencyKey), \(job.id), \(now), \(request))
                    ON CONFLICT (key) DO UPDATE
                    SET job_id = EXCLUDED.job_id, created_at = EXCLUDED.created_at, request = EXCLUDED.request
                    """, on: connection
                )
            }
            try await insertRow(job, on: connection)
        }
    }

    /// A batch in one transaction of two statements (it was two a job): one multi-row
    /// `INSERT` (26 parameters a row, under PostgreSQL's 65,535 a statement: 1,000 rows at
    /// most, a batch's size), and one notification per job from one `SELECT`.
    public func insert(_ jobs: [JobSnapshot]) async throws {
        guard !jobs.isEmpty else { return }
        try await connections.transaction { [self] connection in
            for start in stride(from: 0, to: jobs.count, by: Self.rowsPerInsert) {
                let rows = jobs[start..<min(start + Self.rowsPerInsert, jobs.count)]
                _ = try await connections.run(Self.insertQuery(rows), on: connection)
            }
            _ = try await connections.run(
                "SELECT pg_notify(\(PostgresSchema.channel), id) FROM unnest(\(jobs.map(\.id))::text[]) AS id", on: connection)
        }
    }

    static let rowsPerInsert = 1_000

    /// `INSERT INTO job` of `jobs` (one for a single create, up to `rowsPerInsert` for a batch).
    static func insertQuery(_ jobs: ArraySlice<JobSnapshot>) -> PostgresQuery {
        var binds = PostgresBindings(capacity: jobs.count * 26)
        var rows: [String] = []
        rows.reserveCapacity(jobs.count)
        for job in jobs {
            let c = Columns(job)
            let first = binds.count + 1
            binds.append(job.id)
            binds.append(job.url)
            binds.append(job.state.rawValue)
            binds.append(job.filename)
            binds.append(job.requestedFilename)
            binds.append(job.bytesTotal)
            binds.append(job.bytesDone)
            binds.append(job.connections)
            binds.append(job.resumable)
            binds.append(job.expectedDigest)
            binds.append(job.sha256)
            binds.append(job.path)
            binds.append(job.error?.code)
            binds.append(job.error?.message)
            binds.append(job.priority)
            binds.append(c.headers)
            binds.append(job.createdAt.timeIntervalSince1970)
            binds.append(job.updatedAt.timeIntervalSince1970)
            binds.append(c.completedAt)
            binds.append(c.retryAt)
            binds.append(c.dependencies)
            binds.append(job.limitRate)
            binds.append(job.notify)
            binds.append(job.proxy)
            binds.append(job.insecure)
            binds.append(job.directory)
            binds.append(job.startAt?.timeIntervalSince1970)
            binds.append(job.ignoreSchedule)
            binds.append(job.storedIntegrity)
            rows.append("(" + (first...binds.count).map { "$\($0)" }.joined(separator: ", ") + ")")
        }
        return PostgresQuery(unsafeSQL: "INSERT INTO job (\(insertColumns)) VALUES " + rows.joined(separator: ", "), binds: binds)
    }

    static let insertColumns = """
        id, url, state, filename, requested_filename, bytes_total, bytes_done, connections, resumable, expected_sha256, \
        sha256, path, error_code, error_message, priority, headers, created_at, updated_at, completed_at, retry_at, \
        dependencies, limit_rate, notify, proxy, insecure, directory, start_at, ignore_schedule, integrity
        """

    private func insertRow(_ job: JobSnapshot, on connection: PostgresConnection) async throws {
        _ = try await connections.run(Self.insertQuery([job][...]), on: connection)
        _ = try await connections.run("SELECT pg_notify(\(PostgresSchema.channel), \(job.id))", on: connection)
    }

    public func idempotentCreate(key: String, since: Date) async throws -> IdempotentCreate? {
        try await connections.run(
            "SELECT job_id, request FROM idempotency_key WHERE key = \(key) AND created_at >= \(since.timeIntervalSince1970)"
        ).rows.first.map {
            let (id, request) = try $0.decode((String, String?).self)
            return IdempotentCreate(jobID: id, request: request)
        }
    }

    public func queueSettings() async throws -> QueueSettings? {
        try await connections.withConnection { [self] connection in try await queueSettings(on: connection) }
    }

    func queueSettings(on connection: PostgresConnection) async throws -> QueueSettings? {
        try await connections.run("SELECT paused, max_active, limit_rate FROM queue_settings WHERE id = 1", on: connection).rows.first.map {
            let (paused, maxActive, limitRate) = try $0.decode((Bool, Int, Int64?).self)
            return QueueSettings(paused: paused, maxActive: maxActive, limitRate: limitRate)
        }
    }

    public func saveQueueSettings(_ settings: QueueSettings) async throws {
        _ = try await connections.run(
            """
            WITH saved AS (
                INSERT INTO queue_settings (id, paused, max_active, limit_rate)
                VALUES (1, \(settings.paused), \(settings.maxActive), \(settings.limitRate))
                ON CONFLICT (id) DO UPDATE SET paused = EXCLUDED.paused, max_active = EXCLUDED.max_active,
                    limit_rate = EXCLUDED.limit_rate
                RETURNING id
            )
            SELECT pg_notify(\(PostgresSchema.channel), '') FROM saved
            """
        )
    }

    public func scheduleText() async throws -> String? {
        try await connections.run("SELECT body FROM schedule WHERE id = 1").rows.first.map { try $0.decode(String.self) }
    }

    public func quotaText() async throws -> String? {
        try await connections.run("SELECT body FROM quota WHERE id = 1 AND body <> ''").rows.first.map { try $0.decode(String.self) }
    }

    public func updateQuotaText(_ update: @escaping @Sendable (String?) -> String) async throws -> String {
        try await connections.transaction { [connections] connection in
            // The row exists (empty: none stored) before it is locked, so that two first
            // updates do not both insert.
            _ = try await connections.run("INSERT INTO quota (id, body) VALUES (1, '') ON CONFLICT (id) DO NOTHING", on: connection)
            let stored = try await connections.run("SELECT body FROM quota WHERE id = 1 FOR UPDATE", on: connection).rows.first
                .map { try $0.decode(String.self) }
            let text = update(stored?.isEmpty == false ? stored : nil)
            _ = try await connections.run("UPDATE quota SET body = \(text) WHERE id = 1", on: connection)
            return text
        }
    }

    public func saveScheduleText(_ text: String) async throws {
        _ = try await connections.run(
            "INSERT INTO schedule (id, body) VALUES (1, \(text)) ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body")
    }

    /// A control write with no condition (the single node's contract).
    public func update(_ job: JobSnapshot) async throws {
        _ = try await controlWrite(job, expectedState: nil)
    }

    public func delete(id: String, deliveries: [WebhookDelivery]) async throws {
        try await connections.transaction { [self] connection in
            _ = try await connections.run(
                """
                WITH gone AS (DELETE FROM job WHERE id = \(id) RETURNING id),
                removal AS (
                    INSERT INTO job_removal (id) SELECT id FROM gone
                    ON CONFLICT (id) DO UPDATE SET removed_at = clock_timestamp()
                )
                SELECT pg_notify(\(PostgresSchema.channel), id) FROM gone
                """, on: connection
            )
            try await insert(deliveries, on: connection)
        }
    }

    /// Several finished jobs removed in one transaction (a bulk delete's page), told to every
    /// node once. Only those still finished: another node may have resumed one since the page
    /// was read, and it stays, with no `removed` delivery (the change feed shows it again).
    public func delete(ids: [String], deliveries: [WebhookDelivery]) async throws {
        guard !ids.isEmpty else { return }
        try await connections.transaction { [self] connection in
            let gone = try await connections.run(
                """
                WITH gone AS (DELETE FROM job WHERE id = ANY(\(ids)) AND state IN ('completed', 'failed') RETURNING id),
                removal AS (
                    INSERT INTO job_removal (id) SELECT id FROM gone
                    ON CONFLICT (id) DO UPDATE SET removed_at = clock_timestamp()
                )
                SELECT id FROM gone
                """, on: connection
            ).rows.map { try $0.decode(String.self) }
            if !gone.isEmpty { _ = try await connections.run("SELECT pg_notify(\(PostgresSchema.channel), '')", on: connection) }
            let removed = Set(gone)
            try await insert(deliveries.filter { removed.contains($0.jobID) }, on: connection)
        }
    }

    public func checkpoint(id: String) async throws -> DownloadCheckpoint? {
        let text = try await connections.run("SELECT checkpoint FROM job WHERE id = \(id)").rows.first.flatMap {
            try $0.decode(String?.self)
        }
        return text.flatMap { try? JSONDecoder().decode(DownloadCheckpoint.self, from: Data($0.utf8)) }
    }

    public func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, id: String) async throws {
        if let checkpoint {
            let text = String(decoding: try JSONEncoder().encode(checkpoint), as: UTF8.self)
            _ = try await connections.run(
                """
                UPDATE job SET checkpoint = \(text), bytes_done = \(checkpoint.writtenBytes),
                    bytes_total = COALESCE(\(checkpoint.totalBytes), bytes_total)
                WHERE id = \(id)
                """
            )
        } else {
            _ = try await connections.run("UPDATE job SET checkpoint = NULL WHERE id = \(id)")
        }
    }

    // MARK: Control writes

    /// Writes what a user's command changed, notifying every node in the same transaction.
    /// A run's own columns (bytes, speed, name from the remote) are kept while a node holds
    /// the job's lease: they are that node's to write.
    func controlWrite(_ job: JobSnapshot, expectedState: JobState?) async throws -> Bool {
        let c = Columns(job)
        let expected = expectedState?.rawValue
        let result = try await connections.run(
            """
            WITH changed AS (
                UPDATE job SET url = \(job.url), state = \(job.state.rawValue),
                    requested_filename = \(job.requestedFilename), connections = \(job.connections),
                    expected_sha256 = \(job.expectedDigest), sha256 = \(job.sha256), path = \(job.path),
                    error_code = \(job.error?.code), error_message = \(job.error?.message), priority = \(job.priority),
                    headers = \(c.headers), updated_at = \(job.updatedAt.timeIntervalSince1970),
                    completed_at = \(c.completedAt), retry_at = \(c.retryAt), dependencies = \(c.dependencies),
                    limit_rate = \(job.limitRate), notify = \(job.notify), proxy = \(job.proxy),
                    start_at = \(job.startAt?.timeIntervalSince1970), ignore_schedule = \(job.ignoreSchedule),
                    filename = CASE WHEN owner IS NULL THEN \(job.filename) ELSE filename END,
                    bytes_total = CASE WHEN owner IS NULL THEN \(job.bytesTotal) ELSE bytes_total END,
                    bytes_done = CASE WHEN owner IS NULL THEN \(job.bytesDone) ELSE bytes_done END,
                    resumable = CASE WHEN owner IS NULL THEN \(job.resumable) ELSE resumable END,
                    integrity = \(job.storedIntegrity),
                    speed = CASE WHEN \(job.state.rawValue) = 'running' THEN speed ELSE 0 END,
                    eta = CASE WHEN \(job.state.rawValue) = 'running' THEN eta ELSE NULL END,
                    checkpoint = CASE WHEN \(job.state.rawValue) = 'completed' THEN NULL ELSE checkpoint END
                WHERE id = \(job.id) AND (\(expected)::text IS NULL OR state = \(expected))
                RETURNING id
            )
            SELECT pg_notify(\(PostgresSchema.channel), id) FROM changed
            """
        )
        return !result.rows.isEmpty
    }

    // MARK: Webhook deliveries

    public func saveDeliveries(_ deliveries: [WebhookDelivery]) async throws {
        guard !deliveries.isEmpty else { return }
        try await connections.transaction { [self] connection in try await insert(deliveries, on: connection) }
    }

    private func insert(_ deliveries: [WebhookDelivery], on connection: PostgresConnection) async throws {
        for delivery in deliveries {
            _ = try await connections.run(
                """
                INSERT INTO webhook_delivery (id, job_id, event, url, body, state, attempts, last_status, last_error,
                    created_at, next_attempt_at, delivered_at, receiver)
                VALUES (\(delivery.id), \(delivery.jobID), \(delivery.event.rawValue), \(delivery.url), \(delivery.body),
                    \(delivery.state.rawValue), \(delivery.attempts), \(delivery.lastStatus), \(delivery.lastError),
                    \(delivery.createdAt.timeIntervalSince1970), \(Self.due(delivery)?.timeIntervalSince1970),
                    \(delivery.deliveredAt?.timeIntervalSince1970), \(delivery.receiver))
                ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, attempts = EXCLUDED.attempts,
                    last_status = EXCLUDED.last_status, last_error = EXCLUDED.last_error,
                    next_attempt_at = EXCLUDED.next_attempt_at, delivered_at = EXCLUDED.delivered_at,
                    claimed_until = NULL, claimed_by = NULL
                """, on: connection
            )
        }
    }

    /// A pending delivery is always due at some time: the index orders by it.
    static func due(_ delivery: WebhookDelivery) -> Date? {
        delivery.nextAttemptAt ?? (delivery.state == .pending ? delivery.createdAt : nil)
    }

    public func pendingDeliveries() async throws -> [WebhookDelivery] {
        try await connections.run(
            """
            SELECT \(unescaped: Self.deliveryColumns) FROM webhook_delivery WHERE state = 'pending'
            ORDER BY next_attempt_at, created_at
            """
        ).rows.compactMap(Self.delivery)
    }

    public func deliveryReceivers() async throws -> [String] {
        try await connections.run("SELECT DISTINCT receiver FROM webhook_delivery WHERE state = 'pending'").rows.compactMap {
            try? $0.decode(String.self)
        }
    }

    /// Claims them for this node for a minute in the same statement, so two nodes never send
    /// one delivery; one whose node died is sent by another after that minute.
    public func dueDeliveries(receiver: String, now: Date, excludingJobs: [String], limit: Int) async throws -> [WebhookDelivery] {
        guard limit > 0 else { return [] }
        return try await connections.run(
            """
            UPDATE webhook_delivery SET claimed_until = now() + interval '1 minute', claimed_by = \(nodeName)
            WHERE id IN (
                SELECT id FROM webhook_delivery
                WHERE state = 'pending' AND receiver = \(receiver) AND next_attempt_at <= \(now.timeIntervalSince1970)
                    AND (claimed_until IS NULL OR claimed_until < now()) AND NOT (job_id = ANY(\(excludingJobs)))
                ORDER BY next_attempt_at, created_at LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
            )
            RETURNING \(unescaped: Self.deliveryColumns)
            """
        ).rows.compactMap(Self.delivery).sorted {
            ($0.nextAttemptAt ?? $0.createdAt, $0.createdAt) < ($1.nextAttemptAt ?? $1.createdAt, $1.createdAt)
        }
    }

    public func nextDeliveryAttempt(receiver: String) async throws -> Date? {
        let rows = try await connections.run(
            """
            SELECT next_attempt_at FROM webhook_delivery
            WHERE state = 'pending' AND receiver = \(receiver) AND (claimed_until IS NULL OR claimed_until < now())
            ORDER BY next_attempt_at LIMIT 1
            """
        ).rows
        guard let row = rows.first, let seconds = try? row.decode(Double?.self) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    public func forgetDeliveries(ofRemovedJob jobID: String) async throws {
        _ = try await connections.run(
            """
            DELETE FROM webhook_delivery WHERE job_id = \(jobID)
                AND NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE job_id = \(jobID) AND state = 'pending')
                AND NOT EXISTS (SELECT 1 FROM job WHERE id = \(jobID))
            """
        )
    }

    public func forgetDeliveries(settledBefore cutoff: Date) async throws -> Int {
        let result = try await connections.run(
            "DELETE FROM webhook_delivery WHERE state <> 'pending' AND created_at < \(cutoff.timeIntervalSince1970)"
        )
        return result.metadata.rows ?? 0
    }

    public func deliveries(jobID: String) async throws -> [WebhookDelivery] {
        try await connections.run(
            "SELECT \(unescaped: Self.deliveryColumns) FROM webhook_delivery WHERE job_id = \(jobID) ORDER BY created_at, id"
        ).rows.compactMap(Self.delivery)
    }
}
