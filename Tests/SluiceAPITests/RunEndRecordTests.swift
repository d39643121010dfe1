import Foundation
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing

/// A cluster node records a run's end in the shared store after the file is placed. A pause
/// that came while that record was on its way answered `paused` at once, and the job was
/// `completed` a moment later (CI, the PostgreSQL run of `CompletionRaceTests`): the answer
/// must be what the store ends up holding.
@Suite(
    .serialized, .enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct RunEndRecordTests {
    /// Holds the statement that records a run's end (and only it) before it touches a row,
    /// for as long as `run_end_gate` has a row: the window in which the command comes, open
    /// until the test closes the gate (a fixed sleep was missed by a poll under CI's load).
    static let gatedRunEnd = """
        CREATE TABLE run_end_gate (held boolean);
        INSERT INTO run_end_gate VALUES (true);
        CREATE FUNCTION gated_run_end() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF current_query() LIKE '%CASE WHEN job.state = ''paused'' AND%' THEN
                WHILE EXISTS (SELECT 1 FROM run_end_gate) LOOP PERFORM pg_sleep(0.02); END LOOP;
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER gated_run_end BEFORE UPDATE ON job FOR EACH STATEMENT EXECUTE FUNCTION gated_run_end();
        """

    /// Whether the run-end statement is held at the gate now.
    static func recordingTheEnd(_ database: String) throws -> Bool {
        let count = try TestPostgres.sql(
            """
            SELECT count(*) FROM pg_stat_activity
            WHERE pid <> pg_backend_pid() AND query LIKE '%CASE WHEN job.state = ''paused'' AND%' AND state = 'active'
            """, database: database)
        return count.trimmingCharacters(in: .whitespacesAndNewlines) != "0"
    }

    static func openTheGate(_ database: String) {
        _ = try? TestPostgres.sql("DELETE FROM run_end_gate", database: database)
    }

    /// A service on a database of its own whose job (`name`, 2 MiB) has placed its file and
    /// waits at the gate to record its end; `body` gets the service, the job's id and the
    /// database. The gate is opened after `body` whatever happens.
    static func withARunRecordingItsEnd(
        name: String, seed: Int, _ body: @Sendable (RouterHarness, String, String) async throws -> Void
    ) async throws {
        let database = try TestPostgres.newDatabase()
        try await RouterHarness.with(configure: { $0.store = try? PostgresLocation(database) }) { service in
            try TestPostgres.sql(Self.gatedRunEnd, database: database)
            defer { openTheGate(database) }
            let id = try await service.create(["url": service.testdata("/testdata/2M?seed=\(seed)"), "filename": name])["id"] as! String
            #expect(try await waitUntil(.seconds(60), every: .milliseconds(20)) { try Self.recordingTheEnd(database) }, "the run ends")
            try await body(service, id, database)
        }
    }

    /// The file is placed: the job is completed, whatever the record's wait. The pause waits
    /// for the record within the run's budget, then is refused (409) as it is once the end
    /// is recorded. It used to be taken meanwhile; past its budget (CI's load, the gate
    /// opened late) it answered `paused` for a job the store then held `completed`.
    @Test func aPauseWhileTheStoreRecordsTheRunsEndAnswersWhatItRecords() async throws {
        try await Self.withARunRecordingItsEnd(name: "recorded.bin", seed: 5) { service, id, database in
            // Answered while the gate is closed: the record cannot land before the answer.
            let answer = try await service.request(.post, "/jobs/\(id)/pause")
            #expect(answer.status == 409)
            #expect(answer.errorCode == "invalid_transition")
            #expect(try await service.job(id)["state"] as? String != "paused")
            Self.openTheGate(database)
            #expect(
                try await waitUntil(.seconds(30), every: .milliseconds(20)) { try await service.job(id)["state"] as? String == "completed" }
            )
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").contains("recorded.bin"))
        }
    }

    @Test func aDeleteWithItsFileWhileTheStoreRecordsTheRunsEndLeavesNothing() async throws {
        try await Self.withARunRecordingItsEnd(name: "gone.bin", seed: 6) { service, id, database in
            async let reply = service.request(.delete, "/jobs/\(id)?deleteFile=true")
            // The delete has taken the job (it is gone) while the record waits at the gate.
            #expect(
                try await waitUntil(.seconds(30), every: .milliseconds(10)) { try await service.request(.get, "/jobs/\(id)").status == 404 }
            )
            Self.openTheGate(database)
            let answer = try await reply
            #expect(answer.status == 204)
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").isEmpty)
            // Once the record is done, the job does not come back.
            #expect(try await waitUntil(.seconds(10), every: .milliseconds(20)) { try !Self.recordingTheEnd(database) })
            #expect(try await service.request(.get, "/jobs/\(id)").status == 404)
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").isEmpty)
        }
    }
}
