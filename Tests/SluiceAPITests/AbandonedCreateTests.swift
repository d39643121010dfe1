import Foundation
import JobService
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing

/// A cluster node's create whose `COMMIT` outlives the request's 2 s store budget is answered
/// 503, and PostgreSQL commits it all the same: the job then appeared on every node, one the
/// client was told was not made (and may well have made again).
@Suite(
    .serialized, .enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct AbandonedCreateTests {
    /// Makes the insert of a job whose URL says `slow-commit` take a second longer than the
    /// budget at its `COMMIT` (a deferred trigger), and notes its id in `slow_commit_log`,
    /// which holds it once the commit has landed.
    static let slowCommit = """
        CREATE TABLE slow_commit_log (id text);
        CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.url LIKE '%slow-commit%' THEN
                INSERT INTO slow_commit_log VALUES (NEW.id);
                PERFORM pg_sleep(\(ServiceHarness.storeBudget.components.seconds + 1));
            END IF;
            RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON job DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION slow_commit();
        """

    static func count(_ query: String, _ database: String) throws -> Int {
        Int(try TestPostgres.sql(query, database: database).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test func aCreateAnswered503NeverAppearsThoughItsRowLands() async throws {
        let database = try TestPostgres.newDatabase()
        try await RouterHarness.with(configure: { $0.store = try? PostgresLocation(database) }) { service in
            try TestPostgres.sql(Self.slowCommit, database: database)
            let url = service.testdata("/testdata/1M?slow-commit=1")
            let reply = try await service.send(.post, "/jobs", ["url": url, "paused": true])
            #expect(reply.status == 503)
            #expect(reply.errorCode == "store_unavailable")
            // The row lands after the answer...
            #expect(
                try await waitUntil(.seconds(30), every: .milliseconds(50)) {
                    try Self.count("SELECT count(*) FROM slow_commit_log", database) == 1
                },
                "the insert commits")
            // ...and goes again, never shown by the node.
            #expect(
                try await waitUntil(.seconds(30), every: .milliseconds(50)) { try Self.count("SELECT count(*) FROM job", database) == 0 },
                "the abandoned job's row is removed")
            let listed = try await service.request(.get, "/jobs").json()["jobs"] as? [[String: Any]]
            #expect(listed?.isEmpty == true, "\(listed ?? [])")
            // A create of the same URL after the store answers is made as usual.
            let again = try await service.send(.post, "/jobs", ["url": service.testdata("/testdata/1M"), "paused": true])
            #expect(again.status == 201)
        }
    }
}
