public import Foundation
public import JobService
import PostgresNIO
public import SluiceCore

/// Claims, leases, heartbeats, rescue and the change feed.
extension PostgresJobRepository {
    public func recoverOwnJobs() async throws -> [String] {
        try await connections.run(
            """
            WITH recovered AS (
                UPDATE job SET state = CASE WHEN state = 'running' THEN 'queued' ELSE state END, owner = NULL,
                    last_owner = owner, lease_expires_at = NULL, speed = 0, eta = NULL
                WHERE owner = \(nodeName)
                RETURNING id
            )
            SELECT r.id FROM recovered r, pg_notify(\(PostgresSchema.channel), r.id) AS n
            """
        ).rows.map { try $0.decode(String.self) }
    }

    /// One statement: the ready queued jobs (dependencies completed, no `Retry-After`
    /// pending, no lease still held, the queue not paused), highest priority then oldest
    /// first, locked with `SKIP LOCKED` so that nodes claiming at the same moment take
    /// different jobs, then leased to this node under a new epoch.
    public func claim(limit: Int, at date: Date, holds: QueueHolds) async throws -> [ClaimedJob] {
        // Under the disk's floor nothing starts; jobs waiting for space are not claimed.
        guard limit > 0, !holds.diskLow, !holds.quotaReached else { return [] }
        let now = date.timeIntervalSince1970
        let open = !holds.windowClosed
        let waitingForSpace = holds.diskWaiting.sorted()
        let rows = try await connections.run(
            """
            WITH ready AS (
                SELECT j.id FROM job j
                WHERE j.state = 'queued'
                    AND (j.retry_at IS NULL OR j.retry_at <= \(now))
                    AND (j.start_at IS NULL OR j.start_at <= \(now))
                    AND (\(open) OR j.ignore_schedule)
                    AND NOT (j.id = ANY(\(waitingForSpace)))
                    AND (j.owner IS NULL OR j.lease_expires_at < now())
                    AND NOT COALESCE((SELECT paused FROM queue_settings WHERE id = 1), false)
                    AND NOT EXISTS (
                        SELECT 1 FROM jsonb_array_elements_text(j.dependencies::jsonb) AS d(dependency)
                        WHERE NOT EXISTS (SELECT 1 FROM job x WHERE x.id = d.dependency AND x.state = 'completed')
                    )
                ORDER BY j.priority DESC, j.sequence
                LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
            )
            UPDATE job SET state = 'running', owner = \(nodeName), epoch = job.epoch + 1,
                lease_expires_at = now() + make_interval(secs => \(leaseSeconds)), retry_at = NULL,
                updated_at = \(now), speed = 0, eta = NULL
            FROM ready WHERE job.id = ready.id
            RETURNING \(unescaped: Self.qualifiedJobColumns)
            """
        ).rows
        return try rows.map { row in
            let owned = try Self.owned(row)
            return ClaimedJob(
                job: owned.job, lease: Lease(jobID: owned.job.id, owner: nodeName, epoch: owned.epoch), lastOwner: owned.lastOwner)
        }
    }

    public func saveProgress(_ job: JobSnapshot, lease: Lease) async throws -> Bool {
        try await saveProgress([(job, lease)]).isEmpty
    }

    /// One transaction, one commit, for every run's progress.
    public func saveProgress(_ runs: [(job: JobSnapshot, lease: Lease)]) async throws -> [String] {
        let saved = try await fencedWrites(runs.map(\.lease)) { [self] index, connection in
            try await saveProgress(runs[index].job, lease: runs[index].lease, on: connection)
        }
        return runs.indices.filter { !saved[$0] }.map { runs[$0].lease.jobID }
    }

    /// Writes fenced by `leases`, one each (`write(index, connection)`), in one transaction;
    /// whether each lease was honoured, in the given order. Rows are locked in id order (a
    /// job's own writes in theirs), as every multi-row write of a node does: two of its
    /// transactions over the same jobs never wait on each other in a circle. One write (the
    /// usual case) is one round trip, with no transaction around it.
    private func fencedWrites(
        _ leases: [Lease], _ write: @escaping @Sendable (Int, PostgresConnection) async throws -> Bool
    ) async throws -> [Bool] {
        if leases.count == 1 { return [try await connections.withConnection { connection in try await write(0, connection) }] }
        guard !leases.isEmpty else { return [] }
        let order = leases.indices.sorted { (leases[$0].jobID, $0) < (leases[$1].jobID, $1) }
        return try await connections.transaction { connection in
            var saved = [Bool](repeating: false, count: leases.count)
            for index in order { saved[index] = try await write(index, connection) }
            return saved
        }
    }

    /// A run's progress, taken before a pause and written after it, would overwrite the bytes
    /// the pause answered (its run's last checkpoint): once the job is no longer `running`,
    /// only the lease is renewed, and the write still counts as honoured.
    private func saveProgress(_ job: JobSnapshot, lease: Lease, on connection: PostgresConnection) async throws -> Bool {
        let result = try await connections.run(
            """
            UPDATE job SET
                bytes_done = CASE WHEN state = 'running' THEN \(job.bytesDone) ELSE bytes_done END,
                bytes_total = CASE WHEN state = 'running' THEN \(job.bytesTotal) ELSE bytes_total END,
                speed = CASE WHEN state = 'running' THEN \(job.speed) ELSE speed END,
                eta = CASE WHEN state = 'running' THEN \(job.eta) ELSE eta END,
                filename = CASE WHEN state = 'running' THEN \(job.filename) ELSE filename END,
                resumable = CASE WHEN state = 'running' THEN \(job.resumable) ELSE resumable END,
                updated_at = CASE WHEN state = 'running' THEN \(job.updatedAt.timeIntervalSince1970) ELSE updated_at END,
                lease_expires_at = now() + make_interval(secs => \(leaseSeconds))
            WHERE id = \(lease.jobID) AND owner = \(lease.owner) AND epoch = \(lease.epoch)
            """, on: connection
        )
        return (result.metadata.rows ?? 0) > 0
    }

    public func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, lease: Lease) async throws -> Bool {
        try await saveCheckpoints([(checkpoint, lease)]) == [true]
    }

    /// One transaction, one commit, for every run's checkpoint.
    public func saveCheckpoints(_ writes: [(checkpoint: DownloadCheckpoint?, lease: Lease)]) async throws -> [Bool] {
        try await fencedWrites(writes.map(\.lease)) { [self] index, connection in
            try await saveCheckpoint(writes[index].checkpoint, lease: writes[index].lease, on: connection)
        }
    }

    private func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, lease: Lease, on connection: PostgresConnection) async throws -> Bool {
        let text = try checkpoint.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        let result = try await connections.run(
            """
            UPDATE job SET checkpoint = \(text),
                bytes_done = COALESCE(\(checkpoint?.writtenBytes), bytes_done),
                bytes_total = COALESCE(\(checkpoint?.totalBytes), bytes_total),
                lease_expires_at = now() + make_interval(secs => \(leaseSeconds))
            WHERE id = \(lease.jobID) AND owner = \(lease.owner) AND epoch = \(lease.epoch)
            """, on: connection
        )
        return (result.metadata.rows ?? 0) > 0
    }

    public func finishRun(_ job: JobSnapshot, lease: Lease) async throws -> Bool {
        let c = Columns(job)
        let result = try await connections.run(
            """
            WITH finished AS (
                UPDATE job SET
                    -- A pause that came while the run ended stays, unless the file was placed.
                    state = CASE WHEN job.state = 'paused' AND \(job.state.rawValue) <> 'completed' THEN 'paused'
                        ELSE \(job.state.rawValue) END,
                    filename = \(job.filename), bytes_total = \(job.bytesTotal),
                    bytes_done = \(job.bytesDone), resumable = \(job.resumable), sha256 = \(job.sha256), path = \(job.path),
                    -- What the run learnt of the digest (a checksum file's entry) and signature.
                    expected_sha256 = \(job.expectedDigest), integrity = \(job.storedIntegrity),
                    error_code = \(job.error?.code), error_message = \(job.error?.message),
                    updated_at = \(job.updatedAt.timeIntervalSince1970), completed_at = \(c.completedAt),
                    retry_at = \(c.retryAt), speed = 0, eta = NULL,
                    checkpoint = CASE WHEN \(job.state.rawValue) = 'completed' THEN NULL ELSE checkpoint END,
                    owner = NULL, last_owner = owner, lease_expires_at = NULL
                WHERE id = \(lease.jobID) AND owner = \(lease.owner) AND epoch = \(lease.epoch)
                RETURNING id
            )
            SELECT pg_notify(\(PostgresSchema.channel), id) FROM finished
            """
        )
        return !result.rows.isEmpty
    }

    /// A stopped run gives its job up. A job still `running` (the node is shutting down)
    /// goes back to the queue for another node.
    public func release(_ lease: Lease) async throws {
        _ = try await connections.run(
            """
            WITH released AS (
                UPDATE job SET owner = NULL, last_owner = owner, lease_expires_at = NULL, speed = 0, eta = NULL,
                    state = CASE WHEN state = 'running' THEN 'queued' ELSE state END
                WHERE id = \(lease.jobID) AND owner = \(lease.owner) AND epoch = \(lease.epoch)
                RETURNING id
            )
            SELECT pg_notify(\(PostgresSchema.channel), id) FROM released
            """
        )
    }

    public func update(_ job: JobSnapshot, expectedState: JobState) async throws -> Bool {
        try await controlWrite(job, expectedState: expectedState)
    }

    public func heartbeat(running: [Lease]) async throws -> [String] {
        try await connections.transaction { [self] connection in
            _ = try await connections.run(
                """
                INSERT INTO node (name, started_at, last_seen) VALUES (\(nodeName), now(), now())
                ON CONFLICT (name) DO UPDATE SET last_seen = now()
                """, on: connection
            )
            guard !running.isEmpty else { return [] }
            // The rows first, in id order (see `saveProgress`).
            _ = try await connections.run(
                "SELECT id FROM job WHERE id = ANY(\(running.map(\.jobID).sorted())::text[]) ORDER BY id FOR UPDATE", on: connection
            )
            let renewed = try await connections.run(
                """
                UPDATE job SET lease_expires_at = now() + make_interval(secs => \(leaseSeconds))
                FROM unnest(\(running.map(\.jobID))::text[], \(running.map(\.epoch))::bigint[]) AS lease(id, epoch)
                WHERE job.id = lease.id AND job.epoch = lease.epoch AND job.owner = \(nodeName)
                RETURNING job.id
                """, on: connection
            ).rows.map { try $0.decode(String.self) }
            let kept = Set(renewed)
            return running.map(\.jobID).filter { !kept.contains($0) }
        }
    }

    /// Only the node holding the rescue lock for this transaction rescues; a node that
    /// dies or freezes holds nothing, since the lock ends with the transaction.
    public func rescue(staleAfter: Duration) async throws -> [String] {
        let stale = staleAfter / .seconds(1)
        return try await connections.transaction { [self] connection in
            let won =
                try await connections.run("SELECT pg_try_advisory_xact_lock(\(PostgresSchema.rescueLock))", on: connection)
                .rows.first.map { try $0.decode(Bool.self) } ?? false
            guard won else { return [] }
            let rescued = try await connections.run(
                """
                WITH expired AS (
                    UPDATE job SET owner = NULL, last_owner = owner, lease_expires_at = NULL, speed = 0, eta = NULL,
                        state = CASE WHEN state = 'running' THEN 'queued' ELSE state END
                    WHERE owner IS NOT NULL AND (
                        lease_expires_at < now()
                        OR owner NOT IN (SELECT name FROM node WHERE last_seen >= now() - make_interval(secs => \(stale)))
                    )
                    RETURNING id
                )
                SELECT e.id FROM expired e, pg_notify(\(PostgresSchema.channel), e.id) AS n
                """, on: connection
            ).rows.map { try $0.decode(String.self) }
            _ = try await connections.run("DELETE FROM job_removal WHERE removed_at < now() - interval '1 hour'", on: connection)
            return rescued
        }
    }

    public func changes(since cursor: ClusterCursor?) async throws -> ClusterChanges {
        try await connections.transaction { [self] connection in
            // One snapshot for every statement: the counts agree with the rows and removals.
            _ = try await connections.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", on: connection)
            // The cursor is read first: a row committed after this statement is seen next time.
            // Rows are re-read from two seconds before it, for transactions that took a time
            // stamp before the cursor and committed after the last read.
            let now =
                try await connections.run("SELECT extract(epoch FROM clock_timestamp())::float8", on: connection)
                .rows.first.map { try $0.decode(Double.self) } ?? 0
            let settings = try await queueSettings(on: connection)
            let counts = try await countsByState(on: connection)
            guard let cursor else {
                // Live jobs only: a node holds no finished one.
                let jobs = try await liveJobs(on: connection)
                return ClusterChanges(
                    jobs: jobs, removed: [], settings: settings, cursor: ClusterCursor(databaseTime: now), isFull: true, counts: counts
                )
            }
            let from = cursor.databaseTime - 2
            let jobs = try await connections.run(
                "SELECT \(unescaped: Self.jobColumns) FROM job WHERE changed_at >= to_timestamp(\(from)) ORDER BY sequence",
                on: connection
            ).rows.map(Self.snapshot)
            let removed = try await connections.run(
                "SELECT id FROM job_removal WHERE removed_at >= to_timestamp(\(from))", on: connection
            ).rows.map { try $0.decode(String.self) }
            return ClusterChanges(
                jobs: jobs, removed: removed, settings: settings, cursor: ClusterCursor(databaseTime: now), isFull: false, counts: counts
            )
        }
    }

    public func job(id: String) async throws -> JobSnapshot? {
        try await connections.run("SELECT \(unescaped: Self.jobColumns) FROM job WHERE id = \(id)").rows.first.map(Self.snapshot)
    }

    public func nodes() async throws -> [NodeStatus] {
        try await connections.run(
            """
            SELECT n.name, extract(epoch FROM n.started_at)::float8, extract(epoch FROM n.last_seen)::float8,
                extract(epoch FROM now() - n.last_seen)::float8,
                COALESCE(array_agg(j.id ORDER BY j.sequence) FILTER (WHERE j.id IS NOT NULL), '{}')
            FROM node n LEFT JOIN job j ON j.owner = n.name AND j.state = 'running'
            GROUP BY n.name, n.started_at, n.last_seen
            ORDER BY n.name
            """
        ).rows.map { row in
            let (name, started, seen, age, jobs) = try row.decode((String, Double, Double, Double, [String]).self)
            return NodeStatus(
                name: name, startedAt: Date(timeIntervalSince1970: started), lastHeartbeat: Date(timeIntervalSince1970: seen),
                age: max(0, age), runningJobs: jobs
            )
        }
    }

    public func signals() -> AsyncStream<ClusterSignal> { listener.signals() }

    public func close(removingNode: Bool) async {
        if removingNode {
            _ = try? await connections.run("DELETE FROM node WHERE name = \(nodeName)")
        }
        close()
    }

    /// Closes the store, leaving this node's row (a restart takes it up again).
    public func close() {
        listener.stop()
        connections.close()
    }
}
