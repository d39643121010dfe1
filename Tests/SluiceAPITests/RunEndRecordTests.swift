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
    /// Makes the statement that records a run's end (and only it) sleep before it touches a
    /// row: the window in which the pause comes, held open for a second.
    static let slowRunEnd = """
        CREATE FUNCTION slow_run_end() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF current_query() LIKE '%CASE WHEN job.state = ''paused'' AND%' THEN PERFORM pg_sleep(1); END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER slow_run_end BEFORE UPDATE ON job FOR EACH STATEMENT EXECUTE FUNCTION slow_run_end();
        """

    /// Whether the run-end statement is sleeping in its trigger now.
    static func recordingTheEnd(_ database: String) throws -> Bool {
        let count = try TestPostgres.sql(
            """
            SELECT count(*) FROM pg_stat_activity
            WHERE pid <> pg_backend_pid() AND wait_event = 'PgSleep' AND query LIKE '%CASE WHEN job.state = ''paused'' AND%'
            """, database: database)
        return count.trimmingCharacters(in: .whitespacesAndNewlines) != "0"
    }

    @Test func aPauseWhileTheStoreRecordsTheRunsEndAnswersWhatItRecords() async throws {
        let database = try TestPostgres.newDatabase()
        try await ServiceHarness.with(configure: { $0.store = try? PostgresLocation(database) }) { service in
            try TestPostgres.sql(Self.slowRunEnd, database: database)
            let id =
                try await service.create(["url": service.testdata("/testdata/2M?seed=5"), "filename": "recorded.bin"])["id"] as! String
            #expect(try await waitUntil(.seconds(30), every: .milliseconds(5)) { try Self.recordingTheEnd(database) }, "the run ends")
            let reply = try await service.request(.POST, "/jobs/\(id)/pause")
            let answered = reply.status == 409 ? "completed" : try reply.json()["state"] as? String
            let state = try await service.job(id)["state"] as? String
            #expect(answered == "completed", "the file was placed before the pause came")
            #expect(state == answered, "the outcome changed after the pause answered")
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").contains("recorded.bin"))
        }
    }

    @Test func aDeleteWithItsFileWhileTheStoreRecordsTheRunsEndLeavesNothing() async throws {
        let database = try TestPostgres.newDatabase()
        try await ServiceHarness.with(configure: { $0.store = try? PostgresLocation(database) }) { service in
            try TestPostgres.sql(Self.slowRunEnd, database: database)
            let id = try await service.create(["url": service.testdata("/testdata/2M?seed=6"), "filename": "gone.bin"])["id"] as! String
            #expect(try await waitUntil(.seconds(30), every: .milliseconds(5)) { try Self.recordingTheEnd(database) }, "the run ends")
            #expect(try await service.request(.DELETE, "/jobs/\(id)?deleteFile=true").status == 204)
            #expect(try await service.request(.GET, "/jobs/\(id)").status == 404)
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").isEmpty)
            // Once the record is done, the job does not come back.
            #expect(try await waitUntil(.seconds(10), every: .milliseconds(20)) { try !Self.recordingTheEnd(database) })
            #expect(try await service.request(.GET, "/jobs/\(id)").status == 404)
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").isEmpty)
        }
    }
}
