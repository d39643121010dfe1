import SluiceSystem
public import JobService
public import Foundation
import GRDB
public import SluiceCore

/// Jobs in SQLite through GRDB: a `DatabasePool` in WAL mode (readers never wait for the
/// writer), `synchronous = NORMAL` (a crash of the process loses nothing committed; a power
/// loss may lose the last commits, which only ever makes a checkpoint older, never claim more),
/// and versioned migrations.
public final class SQLiteJobRepository: JobRepository {
    private let pool: DatabasePool

    /// Space held back for the store's own writes when the disk fills.
    private let reserve: ReserveFile

    public init(path: String) throws {
        try Self.createPrivately(path)
        reserve = ReserveFile(path: path + "-reserve")
        reserve.refillIfDue()
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        configuration.busyMode = .timeout(5)
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: jobs") { db in
            try db.execute(
                sql: """
                    CREATE TABLE job (
                        id TEXT PRIMARY KEY NOT NULL,
                        sequence INTEGER NOT NULL,
                        url TEXT NOT NULL,
                        state TEXT NOT NULL,
                        filename TEXT,
                        requestedFilename TEXT,
                        bytesTotal INTEGER,
                        bytesDone INTEGER NOT NULL DEFAULT 0,
                        connections INTEGER NOT NULL,
                        resumable INTEGER NOT NULL DEFAULT 0,
                        expectedSHA256 TEXT,
                        sha256 TEXT,
                        path TEXT,
                        errorCode TEXT,
                        errorMessage TEXT,
                        priority INTEGER NOT NULL DEFAULT 0,
                        headers TEXT NOT NULL DEFAULT '{}',
                        createdAt REAL NOT NULL,
                        updatedAt REAL NOT NULL,
                        completedAt REAL,
                        checkpoint TEXT
                    );
                    CREATE INDEX job_sequence ON job(sequence);
                    """
            )
        }
        migrator.registerMigration("v2: retryAt") { db in
            try db.execute(sql: "ALTER TABLE job ADD COLUMN retryAt REAL")
        }
        migrator.registerMigration("v3: dependencies, job rates, queue settings, idempotency keys") { db in
            try db.execute(
                sql: """
                    ALTER TABLE job ADD COLUMN dependencies TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE job ADD COLUMN limitRate INTEGER;
                    CREATE TABLE queueSettings (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        paused INTEGER NOT NULL,
                        maxActive INTEGER NOT NULL,
                        limitRate INTEGER
                    );
                    CREATE TABLE idempotencyKey (
                        key TEXT PRIMARY KEY NOT NULL,
                        jobID TEXT NOT NULL,
                        createdAt REAL NOT NULL
                    );
                    CREATE INDEX idempotencyKey_createdAt ON idempotencyKey(createdAt);
                    """
            )
        }
        migrator.registerMigration("v4: webhooks and proxies") { db in
            try db.execute(
                sql: """
                    ALTER TABLE job ADD COLUMN notify TEXT;
                    ALTER TABLE job ADD COLUMN proxy TEXT;
                    CREATE TABLE webhookDelivery (
                        id TEXT PRIMARY KEY NOT NULL,
                        jobID TEXT NOT NULL,
                        event TEXT NOT NULL,
                        url TEXT NOT NULL,
                        body TEXT NOT NULL,
                        state TEXT NOT NULL,
                        attempts INTEGER NOT NULL,
                        lastStatus INTEGER,
                        lastError TEXT,
                        createdAt REAL NOT NULL,
                        nextAttemptAt REAL,
                        deliveredAt REAL
                    );
                    CREATE INDEX webhookDelivery_job ON webhookDelivery(jobID, createdAt);
                    CREATE INDEX webhookDelivery_pending ON webhookDelivery(state, nextAttemptAt);
                    """
            )
        }
        migrator.registerMigration("v5: insecure TLS per job") { db in
            try db.execute(sql: "ALTER TABLE job ADD COLUMN insecure BOOLEAN NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v6: jobs by state") { db in
            // A page of one state (`page(states:)`) and the counts read this index only.
            try db.execute(sql: "CREATE INDEX job_state_sequence ON job(state, sequence)")
        }
        migrator.registerMigration("v7: the request an idempotency key made its job from") { db in
            try db.execute(sql: "ALTER TABLE idempotencyKey ADD COLUMN request TEXT")
        }
        migrator.registerMigration("v8: deliveries by receiver") { db in
            // A queue per receiver, read by this index with a limit: an attempt's read never
            // grows with the backlog (a full read of every pending delivery, bodies included,
            // before each batch cost 5.3 ms an attempt at 5,000 pending).
            try db.execute(sql: "ALTER TABLE webhookDelivery ADD COLUMN receiver TEXT NOT NULL DEFAULT ''")
            let pending = try Row.fetchAll(db, sql: "SELECT id, url, createdAt FROM webhookDelivery WHERE state = 'pending'")
            for row in pending {
                let url: String = row["url"]
                try db.execute(
                    sql: "UPDATE webhookDelivery SET receiver = ?, nextAttemptAt = COALESCE(nextAttemptAt, ?) WHERE id = ?",
                    arguments: [WebhookDelivery.receiver(of: url), row["createdAt"] as Double, row["id"] as String])
            }
            try db.execute(
                sql: "CREATE INDEX webhookDelivery_due ON webhookDelivery(receiver, nextAttemptAt, createdAt) WHERE state = 'pending'")
            // Their retention: the settled ones past it, by age.
            try db.execute(sql: "CREATE INDEX webhookDelivery_settled ON webhookDelivery(createdAt) WHERE state <> 'pending'")
        }
        migrator.registerMigration("v9: named tokens") { db in
            // The secret is never stored: its SHA-256 digest, looked up when presented.
            try db.execute(
                sql: """
                    CREATE TABLE accessToken (
                        name TEXT PRIMARY KEY, scope TEXT NOT NULL, digest TEXT NOT NULL UNIQUE, createdAt DOUBLE NOT NULL
                    )
                    """
            )
        }
        migrator.registerMigration("v10: a job's sub-directory of the documents") { db in
            try db.execute(sql: "ALTER TABLE job ADD COLUMN directory TEXT")
        }
        migrator.registerMigration("v11: the schedule") { db in
            try db.execute(sql: "CREATE TABLE schedule (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL)")
        }
        migrator.registerMigration("v12: a job's start-at and ignoreSchedule") { db in
            try db.execute(
                sql: """
                    ALTER TABLE job ADD COLUMN startAt REAL;
                    ALTER TABLE job ADD COLUMN ignoreSchedule BOOLEAN NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("v13: quotas") { db in
            try db.execute(sql: "CREATE TABLE quota (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL)")
        }
        migrator.registerMigration("v14: a job's integrity sources and findings") { db in
            try db.execute(sql: "ALTER TABLE job ADD COLUMN integrity TEXT")
        }
        return migrator
    }

    public func allJobs() async throws -> [JobSnapshot] {
        try await read { db in
            // Row by row (no array of rows beside the jobs), columns by position: a restart
            // reads every job, and GRDB's lookup by name was most of its time.
            var jobs: [JobSnapshot] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT \(Self.jobColumns.joined(separator: ", ")) FROM job ORDER BY sequence")
            while let row = try rows.next() { jobs.append(Self.snapshot(row)) }
            return jobs
        }
    }

    public func job(id: String) async throws -> JobSnapshot? {
        try await read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.jobColumns.joined(separator: ", ")) FROM job WHERE id = ?"), arguments: [id]
            ).map(Self.snapshot)
        }
    }

    public func liveJobs() async throws -> [JobSnapshot] {
        try await read { db in
            var jobs: [JobSnapshot] = []
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT \(Self.jobColumns.joined(separator: ", ")) FROM job
                    WHERE state IN ('queued', 'running', 'paused') ORDER BY sequence
                    """
            )
            while let row = try rows.next() { jobs.append(Self.snapshot(row)) }
            return jobs
        }
    }

    /// A page's upper bound: the sequence of the job `before` (nil when it names none), or
    /// past every job.
    private static func sequenceBound(before: String?, _ db: Database) throws -> Int64? {
        guard let before else { return Int64.max }
        return try Int64.fetchOne(db, sql: "SELECT sequence FROM job WHERE id = ?", arguments: [before])
    }

    public func page(states: Set<JobState>, limit: Int, before: String?) async throws -> [JobSnapshot]? {
        try await page(states: states, limit: limit, before: before, offset: 0)
    }

    public func page(states: Set<JobState>, limit: Int, before: String?, offset: Int) async throws -> [JobSnapshot]? {
        let limit = max(0, limit)
        return try await read { db in
            guard var bound = try Self.sequenceBound(before: before, db) else { return nil }
            if offset > 0 {
                // The first job of the page, counted in an index alone (sequence, or state and
                // sequence): no row is read until the page's own.
                let names = states == Set(JobState.allCases) ? [] : states.map(\.rawValue).sorted()
                let filter = names.isEmpty ? "" : "state IN (\(Array(repeating: "?", count: names.count).joined(separator: ", "))) AND "
                let first = try Int64.fetchOne(
                    db,
                    sql: "SELECT sequence FROM job WHERE \(filter)sequence < ? ORDER BY sequence DESC LIMIT 1 OFFSET ?",
                    arguments: StatementArguments(names.map { $0 as any DatabaseValueConvertible } + [bound, offset])
                )
                guard let first else { return [] }
                bound = first + 1
            }
            return try Self.page(db, states: states, limit: limit, below: bound)
        }
    }

    /// Newest first, `limit` jobs of `states` below the sequence `bound`: one state at a time,
    /// each read from its end of the (state, sequence) index, then merged (a state list in one
    /// query would sort every row of those states).
    private static func page(_ db: Database, states: Set<JobState>, limit: Int, below bound: Int64) throws -> [JobSnapshot] {
        var found: [(sequence: Int64, job: JobSnapshot)] = []
        for state in states {
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT \(Self.jobColumns.joined(separator: ", ")), sequence FROM job
                        WHERE state = ? AND sequence < ? ORDER BY sequence DESC LIMIT ?
                        """
                ), arguments: [state.rawValue, bound, limit]
            )
            while let row = try rows.next() { found.append((row[Self.jobColumns.count], Self.snapshot(row))) }
        }
        return found.sorted { $0.sequence > $1.sequence }.prefix(limit).map(\.job)
    }

    public func countsByState() async throws -> [JobState: Int] {
        try await read { db in
            var counts: [JobState: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) FROM job GROUP BY state") {
                if let state = JobState(rawValue: row[0]) { counts[state, default: 0] += row[1] }
            }
            return counts
        }
    }

    public func insert(_ job: JobSnapshot, idempotencyKey: String?, request: String?) async throws {
        try await write { db in
            if let idempotencyKey {
                // Dated with the job it made, on the service's clock (as `jobID(since:)` is asked).
                let now = job.createdAt.timeIntervalSince1970
                try db.execute(
                    sql: "DELETE FROM idempotencyKey WHERE createdAt < ?", arguments: [now - IdempotencyKey.lifetime]
                )
                try db.execute(
                    sql: "INSERT OR REPLACE INTO idempotencyKey (key, jobID, createdAt, request) VALUES (?, ?, ?, ?)",
                    arguments: [idempotencyKey, job.id, now, request]
                )
            }
            try Self.insertRow(job, into: db)
        }
    }

    public func insert(_ jobs: [JobSnapshot]) async throws {
        try await write { db in for job in jobs { try Self.insertRow(job, into: db) } }
    }

    private static func insertRow(_ job: JobSnapshot, into db: Database) throws {
        // Statements compiled once per connection (`cachedStatement`): a create is two of
        // them, and compiling a 26-column insert cost about as much as running it.
        let sequence = try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(sequence), 0) + 1 FROM job")) ?? 1
        try db.cachedStatement(
            sql: """
                INSERT INTO job (id, sequence, url, state, filename, requestedFilename, bytesTotal, bytesDone,
                    connections, resumable, expectedSHA256, sha256, path, errorCode, errorMessage, priority,
                    headers, createdAt, updatedAt, completedAt, retryAt, dependencies, limitRate, notify, proxy, startAt,
                    ignoreSchedule, integrity, insecure, directory)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [job.id, sequence] + columns(job) + [job.insecure, job.directory])
    }

    public func update(_ job: JobSnapshot) async throws { try await update([job], deliveries: []) }

    /// Every change and delivery in one transaction: one commit for all of them.
    public func update(_ jobs: [JobSnapshot], deliveries: [WebhookDelivery]) async throws {
        guard !jobs.isEmpty || !deliveries.isEmpty else { return }
        try await write { db in
            for job in jobs { try Self.update(job, in: db) }
            try Self.insert(deliveries, into: db)
        }
    }

    private static func update(_ job: JobSnapshot, in db: Database) throws {
        try db.cachedStatement(
            sql: """
                UPDATE job SET url = ?, state = ?, filename = ?, requestedFilename = ?, bytesTotal = ?,
                    bytesDone = ?, connections = ?, resumable = ?, expectedSHA256 = ?, sha256 = ?, path = ?,
                    errorCode = ?, errorMessage = ?, priority = ?, headers = ?, createdAt = ?, updatedAt = ?,
                    completedAt = ?, retryAt = ?, dependencies = ?, limitRate = ?, notify = ?, proxy = ?, startAt = ?,
                    ignoreSchedule = ?, integrity = ?, checkpoint = CASE WHEN ? = 'completed' THEN NULL ELSE checkpoint END
                WHERE id = ?
                """
        ).execute(arguments: Self.columns(job) + [job.state.rawValue, job.id])
    }

    public func delete(id: String, deliveries: [WebhookDelivery]) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM job WHERE id = ?", arguments: [id])
            try Self.insert(deliveries, into: db)
        }
    }

    public func delete(ids: [String], deliveries: [WebhookDelivery]) async throws {
        try await write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM job WHERE id = ?")
            for id in ids { try statement.execute(arguments: [id]) }
            try Self.insert(deliveries, into: db)
        }
    }

    public func idempotentCreate(key: String, since: Date) async throws -> IdempotentCreate? {
        try await read { db in
            try Row.fetchOne(
                db, sql: "SELECT jobID, request FROM idempotencyKey WHERE key = ? AND createdAt >= ?",
                arguments: [key, since.timeIntervalSince1970]
            ).map { IdempotentCreate(jobID: $0[0], request: $0[1]) }
        }
    }

    public func checkpoint(id: String) async throws -> DownloadCheckpoint? {
        let text = try await read { db in try String.fetchOne(db, sql: "SELECT checkpoint FROM job WHERE id = ?", arguments: [id]) }
        return text.flatMap { try? JSONDecoder().decode(DownloadCheckpoint.self, from: Data($0.utf8)) }
    }

    public func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, id: String) async throws {
        try await saveCheckpoints([CheckpointWrite(id: id, checkpoint: checkpoint)])
    }

    /// Every write in one transaction: one commit (one sync of the log) for all of them.
    public func saveCheckpoints(_ writes: [CheckpointWrite]) async throws {
        let encoder = JSONEncoder()
        let texts = try writes.map { write in try write.checkpoint.map { String(decoding: try encoder.encode($0), as: UTF8.self) } }
        try await write { db in
            for (write, text) in zip(writes, texts) {
                if let checkpoint = write.checkpoint {
                    try db.cachedStatement(
                        sql: "UPDATE job SET checkpoint = ?, bytesDone = ?, bytesTotal = COALESCE(?, bytesTotal) WHERE id = ?"
                    ).execute(arguments: [text, checkpoint.writtenBytes, checkpoint.totalBytes, write.id])
                } else {
                    try db.cachedStatement(sql: "UPDATE job SET checkpoint = NULL WHERE id = ?").execute(arguments: [write.id])
                }
            }
        }
    }

    public func ping() async throws {
        try await read { db in _ = try Int.fetchOne(db, sql: "SELECT 1") }
    }

    // MARK: Access

    /// A write; a store that cannot write (disk full, read-only, locked, I/O error) is
    /// `no_space` or `store_unavailable`, which the API answers with 503, never a bare 500.
    /// A full disk first gets the reserve file's space back and tries once more, so that a
    /// state change (a job failing because downloads filled the disk) is never lost.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            let result = try await pool.write(body)
            reserve.refillIfDue()
            return result
        } catch let error as DatabaseError {
            if error.resultCode == .SQLITE_FULL, reserve.release() {
                do {
                    return try await pool.write(body)
                } catch let retried as DatabaseError {
                    throw Self.unavailable(retried)
                }
            }
            throw Self.unavailable(error)
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as DatabaseError {
            throw Self.unavailable(error)
        }
    }

    static func unavailable(_ error: DatabaseError) -> SluiceError {
        if error.resultCode == .SQLITE_FULL {
            return SluiceError(.noSpace, "the job store cannot be written: the disk is full", cause: error)
        }
        let reason =
            switch error.resultCode {
            case .SQLITE_FULL: "the disk holding it is full"
            case .SQLITE_READONLY: "it is read-only"
            case .SQLITE_BUSY, .SQLITE_LOCKED: "it is locked by another process"
            default: "SQLite error \(error.resultCode.rawValue)"
            }
        // The message names no path: it reaches API clients.
        return SluiceError(.storeUnavailable, "the job store cannot be used: \(reason)", cause: error)
    }

    /// Creates the database file readable by this user only (job headers may hold
    /// credentials); SQLite gives its `-wal` and `-shm` files the same mode. An existing
    /// file is narrowed to 0600 too.
    private static func createPrivately(_ path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SluiceError(.io, "cannot create the job store: \(String(cString: strerror(errno)))")
        }
        _ = fchmod(descriptor, 0o600)
        close(descriptor)
        for suffix in ["-wal", "-shm"] { _ = chmod(path + suffix, 0o600) }
    }

    // MARK: Webhook deliveries

    public func saveDeliveries(_ deliveries: [WebhookDelivery]) async throws {
        guard !deliveries.isEmpty else { return }
        try await write { db in try Self.insert(deliveries, into: db) }
    }

    private static func insert(_ deliveries: [WebhookDelivery], into db: Database) throws {
        for delivery in deliveries {
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO webhookDelivery (id, jobID, event, url, body, state, attempts, lastStatus,
                        lastError, createdAt, nextAttemptAt, deliveredAt, receiver)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    delivery.id, delivery.jobID, delivery.event.rawValue, delivery.url, delivery.body,
                    delivery.state.rawValue, delivery.attempts, delivery.lastStatus, delivery.lastError,
                    delivery.createdAt.timeIntervalSince1970,
                    // A pending delivery is always due at some time: the index orders by it.
                    (delivery.nextAttemptAt ?? (delivery.state == .pending ? delivery.createdAt : nil))?.timeIntervalSince1970,
                    delivery.deliveredAt?.timeIntervalSince1970, delivery.receiver,
                ]
            )
        }
    }

    public func pendingDeliveries() async throws -> [WebhookDelivery] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM webhookDelivery WHERE state = 'pending' ORDER BY nextAttemptAt, createdAt"
            ).compactMap(Self.delivery)
        }
    }

    public func deliveryReceivers() async throws -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT receiver FROM webhookDelivery WHERE state = 'pending'")
        }
    }

    public func dueDeliveries(receiver: String, now: Date, excludingJobs: [String], limit: Int) async throws -> [WebhookDelivery] {
        guard limit > 0 else { return [] }
        return try await read { db in
            let excluded = excludingJobs.isEmpty ? "" : "AND jobID NOT IN (\(excludingJobs.map { _ in "?" }.joined(separator: ",")))"
            var arguments: [any DatabaseValueConvertible] = [receiver, now.timeIntervalSince1970]
            arguments += excludingJobs as [any DatabaseValueConvertible]
            arguments.append(limit)
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM webhookDelivery INDEXED BY webhookDelivery_due
                    WHERE state = 'pending' AND receiver = ? AND nextAttemptAt <= ? \(excluded)
                    ORDER BY nextAttemptAt, createdAt LIMIT ?
                    """, arguments: StatementArguments(arguments)
            ).compactMap(Self.delivery)
        }
    }

    public func nextDeliveryAttempt(receiver: String) async throws -> Date? {
        try await read { db in
            try Double.fetchOne(
                db,
                sql: """
                    SELECT nextAttemptAt FROM webhookDelivery INDEXED BY webhookDelivery_due
                    WHERE state = 'pending' AND receiver = ? ORDER BY nextAttemptAt LIMIT 1
                    """, arguments: [receiver]
            ).map(Date.init(timeIntervalSince1970:))
        }
    }

    public func forgetDeliveries(ofRemovedJob jobID: String) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    DELETE FROM webhookDelivery WHERE jobID = ?1
                        AND NOT EXISTS (SELECT 1 FROM webhookDelivery WHERE jobID = ?1 AND state = 'pending')
                        AND NOT EXISTS (SELECT 1 FROM job WHERE id = ?1)
                    """, arguments: [jobID])
        }
    }

    public func forgetDeliveries(settledBefore cutoff: Date) async throws -> Int {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM webhookDelivery WHERE state <> 'pending' AND createdAt < ?", arguments: [cutoff.timeIntervalSince1970])
            return db.changesCount
        }
    }

    public func deliveries(jobID: String) async throws -> [WebhookDelivery] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM webhookDelivery WHERE jobID = ? ORDER BY createdAt, id", arguments: [jobID]
            ).compactMap(Self.delivery)
        }
    }

    private static func delivery(_ row: Row) -> WebhookDelivery? {
        guard let event = WebhookEvent(rawValue: row["event"]), let state = WebhookDelivery.State(rawValue: row["state"]) else {
            return nil
        }
        var delivery = WebhookDelivery(
            id: row["id"], jobID: row["jobID"], event: event, url: row["url"], body: row["body"],
            createdAt: Date(timeIntervalSince1970: row["createdAt"])
        )
        delivery.state = state
        delivery.attempts = row["attempts"]
        delivery.lastStatus = row["lastStatus"]
        delivery.lastError = row["lastError"]
        delivery.nextAttemptAt = (row["nextAttemptAt"] as Double?).map(Date.init(timeIntervalSince1970:))
        delivery.deliveredAt = (row["deliveredAt"] as Double?).map(Date.init(timeIntervalSince1970:))
        return delivery
    }
}
