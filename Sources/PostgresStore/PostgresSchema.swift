import PostgresNIO

/// The cluster store's tables, as numbered migrations applied in order, each once, in one
/// transaction under an advisory lock (several nodes may start at the same moment).
enum PostgresSchema {
    /// Held while migrating.
    static let migrationLock: Int64 = 0x51_7C_E0_01
    /// Held, per transaction, by the node that rescues expired leases.
    static let rescueLock: Int64 = 0x51_7C_E0_02
    /// The channel every control write notifies, with the job's id.
    static let channel = "sluice_jobs"

    struct Migration {
        let version: Int
        let name: String
        let statements: [String]
    }

    static let migrations: [Migration] = [
        Migration(
            version: 1, name: "jobs, leases, nodes, queue, idempotency keys, webhook deliveries",
            statements: [
                "CREATE SEQUENCE job_sequence",
                """
                CREATE TABLE job (
                    id text PRIMARY KEY,
                    sequence bigint NOT NULL DEFAULT nextval('job_sequence'),
                    url text NOT NULL,
                    state text NOT NULL,
                    filename text,
                    requested_filename text,
                    bytes_total bigint,
                    bytes_done bigint NOT NULL DEFAULT 0,
                    speed double precision NOT NULL DEFAULT 0,
                    eta double precision,
                    connections integer NOT NULL,
                    resumable boolean NOT NULL DEFAULT false,
                    expected_sha256 text,
                    sha256 text,
                    path text,
                    error_code text,
                    error_message text,
                    priority integer NOT NULL DEFAULT 0,
                    headers text NOT NULL DEFAULT '{}',
                    created_at double precision NOT NULL,
                    updated_at double precision NOT NULL,
                    completed_at double precision,
                    retry_at double precision,
                    dependencies text NOT NULL DEFAULT '[]',
                    limit_rate bigint,
                    notify text,
                    proxy text,
                    checkpoint text,
                    owner text,
                    epoch bigint NOT NULL DEFAULT 0,
                    lease_expires_at timestamptz,
                    last_owner text,
                    changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
                )
                """,
                "CREATE INDEX job_claimable ON job (priority DESC, sequence) WHERE state = 'queued'",
                "CREATE INDEX job_changed ON job (changed_at)",
                "CREATE INDEX job_owner ON job (owner) WHERE owner IS NOT NULL",
                """
                CREATE FUNCTION sluice_job_touch() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN NEW.changed_at := clock_timestamp(); RETURN NEW; END $$
                """,
                "CREATE TRIGGER job_touch BEFORE UPDATE ON job FOR EACH ROW EXECUTE FUNCTION sluice_job_touch()",
                "CREATE TABLE job_removal (id text PRIMARY KEY, removed_at timestamptz NOT NULL DEFAULT clock_timestamp())",
                """
                CREATE TABLE node (
                    name text PRIMARY KEY,
                    started_at timestamptz NOT NULL,
                    last_seen timestamptz NOT NULL
                )
                """,
                """
                CREATE TABLE queue_settings (
                    id integer PRIMARY KEY CHECK (id = 1),
                    paused boolean NOT NULL,
                    max_active integer NOT NULL,
                    limit_rate bigint
                )
                """,
                """
                CREATE TABLE idempotency_key (
                    key text PRIMARY KEY,
                    job_id text NOT NULL,
                    created_at double precision NOT NULL
                )
                """,
                "CREATE INDEX idempotency_key_created ON idempotency_key (created_at)",
                """
                CREATE TABLE webhook_delivery (
                    id text PRIMARY KEY,
                    job_id text NOT NULL,
                    event text NOT NULL,
                    url text NOT NULL,
                    body text NOT NULL,
                    state text NOT NULL,
                    attempts integer NOT NULL,
                    last_status integer,
                    last_error text,
                    created_at double precision NOT NULL,
                    next_attempt_at double precision,
                    delivered_at double precision,
                    claimed_until timestamptz,
                    claimed_by text
                )
                """,
                "CREATE INDEX webhook_delivery_job ON webhook_delivery (job_id, created_at)",
                "CREATE INDEX webhook_delivery_pending ON webhook_delivery (state, next_attempt_at)",
            ]),
        Migration(
            version: 2, name: "insecure TLS per job",
            statements: [
                "ALTER TABLE job ADD COLUMN insecure boolean NOT NULL DEFAULT false"
            ]),
        Migration(
            version: 3, name: "jobs by state",
            statements: [
                "CREATE INDEX job_state_sequence ON job (state, sequence)"
            ]),
        Migration(
            version: 4, name: "jobs counted by state",
            statements: [
                // Kept by the store as jobs change, so that a node reads the counts of jobs
                // it does not hold (finished ones) in one small read, never a scan. Spread
                // over 16 rows per state by the writing backend, so that nodes writing at
                // once seldom wait on the same row.
                "CREATE TABLE job_count (state text NOT NULL, shard integer NOT NULL, n bigint NOT NULL, PRIMARY KEY (state, shard))",
                """
                CREATE FUNCTION sluice_job_count() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    slot_number integer := pg_backend_pid() % 16;
                BEGIN
                    IF TG_OP IN ('UPDATE', 'DELETE') THEN
                        INSERT INTO job_count AS c (state, shard, n) VALUES (OLD.state, slot_number, -1)
                            ON CONFLICT ON CONSTRAINT job_count_pkey DO UPDATE SET n = c.n - 1;
                    END IF;
                    IF TG_OP IN ('UPDATE', 'INSERT') THEN
                        INSERT INTO job_count AS c (state, shard, n) VALUES (NEW.state, slot_number, 1)
                            ON CONFLICT ON CONSTRAINT job_count_pkey DO UPDATE SET n = c.n + 1;
                    END IF;
                    RETURN NULL;
                END $$
                """,
                "CREATE TRIGGER job_count_rows AFTER INSERT OR DELETE ON job FOR EACH ROW EXECUTE FUNCTION sluice_job_count()",
                """
                CREATE TRIGGER job_count_state AFTER UPDATE OF state ON job FOR EACH ROW
                    WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION sluice_job_count()
                """,
                "INSERT INTO job_count (state, shard, n) SELECT state, 0, count(*) FROM job GROUP BY state",
            ]),
        Migration(
            version: 5, name: "jobs counted once per statement",
            statements: [
                // Counted per row, a statement that made or removed many rows updated the same
                // count row once per row in one transaction, each time over all its earlier
                // versions: 40,000 rows inserted at once took 12 s (0.24 s without). Counted
                // once per statement from its transition tables, it costs one write per state.
                "DROP TRIGGER job_count_rows ON job",
                "DROP TRIGGER job_count_state ON job",
                "DROP FUNCTION sluice_job_count()",
                """
                CREATE FUNCTION sluice_job_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO job_count AS c (state, shard, n)
                        SELECT state, pg_backend_pid() % 16, count(*) FROM added_rows GROUP BY state
                        ON CONFLICT ON CONSTRAINT job_count_pkey DO UPDATE SET n = c.n + EXCLUDED.n;
                    RETURN NULL;
                END $$
                """,
                """
                CREATE FUNCTION sluice_job_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO job_count AS c (state, shard, n)
                        SELECT state, pg_backend_pid() % 16, -count(*) FROM removed_rows GROUP BY state
                        ON CONFLICT ON CONSTRAINT job_count_pkey DO UPDATE SET n = c.n + EXCLUDED.n;
                    RETURN NULL;
                END $$
                """,
                // A change of state, per row and only then (a transition table would be made
                // for every progress and checkpoint write); few rows change state at once.
                """
                CREATE FUNCTION sluice_job_count_moved() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    slot_number integer := pg_backend_pid() % 16;
                BEGIN
                    INSERT INTO job_count AS c (state, shard, n) VALUES (OLD.state, slot_number, -1)
                        ON CONFLICT ON CONSTRAINT job_count_pkey DO UPDATE SET n = c.n - 1;
                    INSERT INTO job_count AS c (state, shard, n) VALUES (NEW.state, slot_number, 1)
                        ON CONFLICT ON CONSTRAINT job_count_pkey DO UPDATE SET n = c.n + 1;
                    RETURN NULL;
                END $$
                """,
                """
                CREATE TRIGGER job_count_insert AFTER INSERT ON job REFERENCING NEW TABLE AS added_rows
                    FOR EACH STATEMENT EXECUTE FUNCTION sluice_job_count_added()
                """,
                """
                CREATE TRIGGER job_count_delete AFTER DELETE ON job REFERENCING OLD TABLE AS removed_rows
                    FOR EACH STATEMENT EXECUTE FUNCTION sluice_job_count_removed()
                """,
                """
                CREATE TRIGGER job_count_state AFTER UPDATE OF state ON job FOR EACH ROW
                    WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION sluice_job_count_moved()
                """,
            ]),
        Migration(
            version: 6, name: "the request an idempotency key made its job from",
            statements: ["ALTER TABLE idempotency_key ADD COLUMN request text"]),
        Migration(
            version: 7, name: "deliveries by receiver",
            statements: [
                // A queue per receiver, read by this index with a limit: an attempt's read never
                // grows with the backlog. The receiver is the URL's origin without user
                // information, lower-cased (`WebhookDelivery.receiver`).
                "ALTER TABLE webhook_delivery ADD COLUMN receiver text NOT NULL DEFAULT ''",
                #"""
                UPDATE webhook_delivery SET
                    receiver = lower(regexp_replace(url, '^([^:/?#]*://)(?:[^/?#]*@)?([^/?#]*).*$', '\1\2')),
                    next_attempt_at = COALESCE(next_attempt_at, created_at)
                WHERE state = 'pending'
                """#,
                "CREATE INDEX webhook_delivery_due ON webhook_delivery (receiver, next_attempt_at, created_at) WHERE state = 'pending'",
                // Their retention: the settled ones past it, by age.
                "CREATE INDEX webhook_delivery_settled ON webhook_delivery (created_at) WHERE state <> 'pending'",
            ]),
        Migration(
            version: 8, name: "named tokens",
            statements: [
                // The secret is never stored: its SHA-256 digest, looked up when presented.
                """
                CREATE TABLE access_token (
                    name text PRIMARY KEY, scope text NOT NULL, digest text NOT NULL UNIQUE,
                    created_at double precision NOT NULL
                )
                """
            ]),
        Migration(
            version: 9, name: "a job's sub-directory of the documents",
            statements: ["ALTER TABLE job ADD COLUMN directory text"]),
        Migration(
            version: 10, name: "the schedule",
            statements: ["CREATE TABLE schedule (id integer PRIMARY KEY CHECK (id = 1), body text NOT NULL)"]),
        Migration(
            version: 11, name: "a job's start-at and ignoreSchedule",
            statements: [
                "ALTER TABLE job ADD COLUMN start_at double precision",
                "ALTER TABLE job ADD COLUMN ignore_schedule boolean NOT NULL DEFAULT false",
            ]),
        Migration(
            version: 12, name: "quotas",
            statements: ["CREATE TABLE quota (id integer PRIMARY KEY CHECK (id = 1), body text NOT NULL)"]),
        Migration(
            version: 13, name: "a job's integrity sources and findings",
            statements: ["ALTER TABLE job ADD COLUMN integrity text"]),
    ]

    /// Applies what is missing; returns the versions applied.
    static func migrate(_ connections: PostgresConnections) async throws -> [Int] {
        try await connections.transaction { [self] connection in
            _ = try await connections.run("SELECT pg_advisory_xact_lock(\(migrationLock))", on: connection)
            _ = try await connections.run(
                """
                CREATE TABLE IF NOT EXISTS sluice_schema (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, on: connection
            )
            let rows = try await connections.run("SELECT COALESCE(MAX(version), 0) FROM sluice_schema", on: connection)
            let current = try rows.rows.first.map { try $0.decode(Int.self) } ?? 0
            var applied: [Int] = []
            for migration in migrations where migration.version > current {
                for statement in migration.statements {
                    _ = try await connections.run(PostgresQuery(unsafeSQL: statement), on: connection)
                }
                _ = try await connections.run(
                    "INSERT INTO sluice_schema (version, name) VALUES (\(migration.version), \(migration.name))", on: connection
                )
                applied.append(migration.version)
            }
            return applied
        }
    }
}
