import DownloadEngine
import Foundation
@testable import JobService
import Logging
@testable import PostgresStore
import PostgresNIO
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 20, point 3, for a cluster node: it holds the live jobs only, as a single node does;
/// finished ones are read from the store, and counted from the counts the store keeps.
@Suite(.enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct ClusterFinishedJobsTests {
    static func job(_ id: String, _ state: JobState, second: Double, after: [String] = []) -> JobSnapshot {
        var job = JobSnapshot(
            id: id, url: "http://127.0.0.1:9/\(id)", state: state, connections: 1, priority: 0,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000 + second)
        )
        job.after = after
        if state == .failed { job.error = .init(code: "network", message: "refused") }
        return job
    }

    static func scheduler(_ store: PostgresJobRepository, in directory: TemporaryDirectory, client: Fetcher) async throws -> JobScheduler {
        var configuration = JobScheduler.Configuration(
            cacheDirectory: directory.path + "/cache-\(store.nodeName)", documentsDirectory: directory.path + "/documents"
        )
        configuration.nodeName = store.nodeName
        return try await JobScheduler(configuration: configuration, repository: store, client: client)
    }

    /// Two nodes' stores on a new database whose queue is paused (nothing starts: the jobs
    /// are the store's to move), closed after `body`.
    static func withTwoNodes(
        _ body: (TemporaryDirectory, PostgresJobRepository, PostgresJobRepository) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let url = try TestPostgres.newDatabase()
            let a = try await PostgresClusterStoreTests.open(url, node: "a")
            let b = try await PostgresClusterStoreTests.open(url, node: "b")
            defer {
                a.close()
                b.close()
            }
            try await a.saveQueueSettings(QueueSettings(paused: true, maxActive: 4))
            try await body(directory, a, b)
        }
    }

    @Test func aNodeHoldsLiveJobsAndFollowsWhatOthersFinishAndRemove() async throws {
        try await Self.withTwoNodes { directory, a, b in
            for job in [
                Self.job("c0", .completed, second: 0), Self.job("c1", .completed, second: 1), Self.job("f2", .failed, second: 2),
                Self.job("p3", .paused, second: 3), Self.job("p6", .paused, second: 6, after: ["c1"]),
            ] { try await a.insert(job) }
            let client = Fetcher()
            let onB = try await Self.scheduler(b, in: directory, client: client)
            // Its changes are written behind it, by the writers a group would run.
            try await withServices(onB.storeWriters) { () async throws in

                // The start loads the live jobs only (it held all five before).
                #expect(onB.jobs.count == 2)
                var counts = onB.countsByState()
                #expect(counts[.completed] == 2 && counts[.failed] == 1 && counts[.paused] == 2)
                #expect(try await onB.job(id: "f2")?.error?.message == "refused")
                #expect(try await onB.list(states: [.completed], limit: 10).map(\.id) == ["c1", "c0"])
                #expect(try await onB.list(limit: 4).map(\.id) == ["p6", "p3", "f2", "c1"])
                #expect(try await onB.list(limit: 2, after: "f2").map(\.id) == ["c1", "c0"])
                let stream = try await onB.subscribe()
                stream.changes.cancel()
                #expect(stream.initial.map(\.event.jobID) == ["c0", "c1", "f2", "p3", "p6"])

                // Another node makes a job waiting for c0, finished long ago and held by no one:
                // its state is read, so the job waits for nothing (it looked deleted before,
                // and failed with dependency_failed).
                try await a.insert(Self.job("q7", .queued, second: 7, after: ["c0"]))
                await ClusterChangeFeed.synchronize(full: false, on: onB)
                let q7 = try #require(try await onB.job(id: "q7"))
                #expect(q7.state == .queued && q7.error == nil && q7.waitingFor.isEmpty)

                // It completes there: here it is let go, shown as the store has it, counted.
                var completed = q7
                completed.state = .completed
                #expect(try await a.update(completed, expectedState: .queued))
                let before = onB.events.currentID
                await ClusterChangeFeed.synchronize(full: false, on: onB)
                // Reads overlap by 2 s: the next one has the row again, shown once all the same
                // (three times before).
                await ClusterChangeFeed.synchronize(full: false, on: onB)
                let (subscriber, missed) = onB.events.subscribe(after: before)
                subscriber.cancel()
                #expect(missed?.filter { $0.event.jobID == "q7" }.count == 1)
                #expect(onB.jobs.count == 2)
                #expect(try await onB.job(id: "q7")?.state == .completed)
                #expect(onB.countsByState()[.completed] == 3)

                // Another node removes a finished job: no longer counted here.
                let beforeRemoval = onB.events.currentID
                try await a.delete(id: "c0")
                await ClusterChangeFeed.synchronize(full: false, on: onB)
                #expect(onB.countsByState()[.completed] == 2)
                // Streams here are told, once (they were not told at all: the node did not hold it).
                await ClusterChangeFeed.synchronize(full: false, on: onB)
                let (removals, told) = onB.events.subscribe(after: beforeRemoval)
                removals.cancel()
                #expect(told?.filter { $0.event.jobID == "c0" }.count == 1)
                // A full read has the live jobs only, and changes none of it.
                await ClusterChangeFeed.synchronize(full: true, on: onB)
                #expect(onB.jobs.count == 2)
                counts = onB.countsByState()
                #expect(counts[.completed] == 2 && counts[.failed] == 1 && counts[.paused] == 2)

                // A clear of the finished jobs here removes those in the store, a page at a time.
                let cleared = try await onB.deleteAll(states: JobState.finished, deleteFile: false)
                #expect(cleared == 3)
                #expect(try await a.allJobs().map(\.id) == ["p3", "p6"])
                // p6 waited for c1, which had completed: it waits for nothing now (written
                // behind the delete by the node's writers, so read until it lands).
                #expect(try await waitUntil(.seconds(5)) { try await a.job(id: "p6")?.after == [] })
                counts = try await a.countsByState()
                #expect((counts[.completed] ?? 0) == 0 && (counts[.failed] ?? 0) == 0 && counts[.paused] == 2)
                await onB.shutdown()
            }
            try await client.shutdown()
        }
    }

    /// Another node edits a queued job this node holds to wait for a job finished long ago,
    /// which this node never held: the job was failed as "dependency deleted" here (and the
    /// failure written), since an unknown dependency meant a deleted one.
    @Test func aJobEditedElsewhereToWaitForAnOldFinishedJobIsNotFailed() async throws {
        try await Self.withTwoNodes { directory, a, b in
            try await a.insert(Self.job("c0", .completed, second: 0))
            try await a.insert(Self.job("q1", .queued, second: 1))
            let client = Fetcher()
            let onB = try await Self.scheduler(b, in: directory, client: client)
            #expect(onB.jobs.count == 1)
            var edited = try #require(try await a.job(id: "q1"))
            edited.after = ["c0"]
            #expect(try await a.update(edited, expectedState: .queued))
            await ClusterChangeFeed.synchronize(full: false, on: onB)
            #expect(try await a.job(id: "q1")?.state == .queued)
            let held = try #require(onB.jobs["q1"])
            #expect(held.state == .queued && held.after == ["c0"] && held.waitingFor.isEmpty)
            await onB.shutdown()
            try await client.shutdown()
        }
    }

    /// A bulk delete's page is read, then removed: a job another node resumed in between
    /// stays, and no `removed` delivery is stored for it.
    @Test func aPageOfFinishedJobsRemovesOnlyThoseStillFinished() async throws {
        let store = try await PostgresClusterStoreTests.open(TestPostgres.newDatabase(), node: "a")
        defer { store.close() }
        try await store.insert(Self.job("f0", .failed, second: 0))
        try await store.insert(Self.job("f1", .failed, second: 1))
        var resumed = try #require(try await store.job(id: "f1"))
        resumed.state = .queued
        #expect(try await store.update(resumed, expectedState: .failed))
        let deliveries = ["f0", "f1"].map { id in
            WebhookDelivery(id: "d-\(id)", jobID: id, event: .removed, url: "https://hooks.example.com/x", body: "{}", createdAt: Date())
        }
        try await store.delete(ids: ["f0", "f1"], deliveries: deliveries)
        #expect(try await store.allJobs().map(\.id) == ["f1"])
        #expect(try await store.deliveries(jobID: "f1").isEmpty)
        #expect(try await store.deliveries(jobID: "f0").count == 1)
    }

    /// The counts kept by the store start from the rows already there when the migration that
    /// adds them runs, and follow every write after.
    @Test func storedCountsStartFromExistingRowsAndFollowEveryWrite() async throws {
        let url = try TestPostgres.newDatabase()
        let store = try await PostgresClusterStoreTests.open(url, node: "a")
        defer { store.close() }
        for (index, state) in [JobState.completed, .completed, .failed, .queued].enumerated() {
            try await store.insert(Self.job("j\(index)", state, second: Double(index)))
        }
        // Back to the schema before the counts, rows kept, and migrated again.
        _ = try await store.connections.transaction { connection in
            for statement in [
                "DROP TABLE job_count", "DROP FUNCTION sluice_job_count_added() CASCADE",
                "DROP FUNCTION sluice_job_count_removed() CASCADE", "DROP FUNCTION sluice_job_count_moved() CASCADE",
                "ALTER TABLE idempotency_key DROP COLUMN request", "DROP INDEX webhook_delivery_settled",
                "ALTER TABLE webhook_delivery DROP COLUMN receiver", "DROP TABLE access_token",
                "ALTER TABLE job DROP COLUMN directory", "DROP TABLE schedule", "ALTER TABLE job DROP COLUMN start_at",
                "ALTER TABLE job DROP COLUMN ignore_schedule", "DROP TABLE quota", "ALTER TABLE job DROP COLUMN integrity",
                "DELETE FROM sluice_schema WHERE version >= 4",
            ] {
                _ = try await store.connections.run(PostgresQuery(unsafeSQL: statement), on: connection)
            }
        }
        #expect(try await PostgresSchema.migrate(store.connections) == [4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
        var counts = try await store.countsByState()
        #expect(counts[.completed] == 2 && counts[.failed] == 1 && counts[.queued] == 1)
        // A claim, a control write, a run's end, removals one and many at a time.
        let claim = try #require(try await store.claim(limit: 1).first)
        counts = try await store.countsByState()
        #expect(counts[.queued] == 0 && counts[.running] == 1)
        var ended = claim.job
        ended.state = .failed
        #expect(try await store.finishRun(ended, lease: claim.lease))
        var retried = ended
        retried.state = .paused
        #expect(try await store.update(retried, expectedState: .failed))
        try await store.delete(id: "j0")
        try await store.delete(ids: ["j1", "j2"], deliveries: [])
        counts = try await store.countsByState()
        #expect((counts[.completed] ?? 0) == 0 && (counts[.failed] ?? 0) == 0 && counts[.paused] == 1)
        #expect(counts.values.reduce(0, +) == (try await store.allJobs().count))
        // Statements of many rows, each counted once: 2,000 made, 1,000 of them moved, 500 gone.
        _ = try await store.connections.run(
            """
            INSERT INTO job (id, url, state, connections, priority, created_at, updated_at)
            SELECT 'many' || n, 'http://127.0.0.1:9/x', 'completed', 1, 0, 1800000000, 1800000000
            FROM generate_series(1, 2000) AS n
            """
        )
        _ = try await store.connections.run("UPDATE job SET state = 'failed' WHERE id LIKE 'many%' AND substr(id, 5)::int <= 1000")
        _ = try await store.connections.run("UPDATE job SET priority = 1 WHERE id LIKE 'many%'")
        _ = try await store.connections.run("DELETE FROM job WHERE id LIKE 'many%' AND substr(id, 5)::int > 1500")
        counts = try await store.countsByState()
        #expect(counts[.completed] == 500 && counts[.failed] == 1000 && counts[.paused] == 1)
    }
}
