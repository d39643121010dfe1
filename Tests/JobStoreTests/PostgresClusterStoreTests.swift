import DownloadEngine
import Foundation
import JobService
import Logging
import PostgresStore
import SluiceCore
import SluiceTestSupport
import Testing

/// The cluster's store on a real PostgreSQL: claims, fencing, heartbeats and rescue, each
/// test on a database of its own.
@Suite(.enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct PostgresClusterStoreTests {
    static func open(_ url: String, node: String, lease: Duration = .seconds(30)) throws -> PostgresJobRepository {
        var logger = Logger(label: "test-store")
        logger.logLevel = .critical
        return try PostgresJobRepository(location: try PostgresLocation(url), nodeName: node, leaseDuration: lease, logger: logger)
    }

    static func job(_ id: String, priority: Int = 0, age: Double = 0, after: [String] = []) -> JobSnapshot {
        var job = JobSnapshot(
            id: id, url: "https://example.com/\(id)", state: .queued, connections: 2, priority: priority,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000 + age), headers: ["Cookie": "a=b"]
        )
        job.after = after
        return job
    }

    /// Node a's store on a new database, with job `j` inserted and claimed by a.
    static func claimedJob() throws -> (store: PostgresJobRepository, claim: ClaimedJob) {
        let store = try open(TestPostgres.newDatabase(), node: "a")
        try store.insert(job("j"))
        return (store, try #require(try store.claim(limit: 1).first))
    }

    @Test func jobsRoundTripAndMigrationsRunOnce() throws {
        let url = try TestPostgres.newDatabase()
        let store = try Self.open(url, node: "a")
        defer { store.close(removingNode: false) }
        var job = Self.job("j1", priority: 3)
        job.limitRate = 1000
        job.notify = "https://hooks.example.com/x"
        try store.insert(job, idempotencyKey: "key-1")
        #expect(try store.allJobs() == [job])
        #expect(try store.jobID(idempotencyKey: "key-1", since: .distantPast) == "j1")
        // A second node on the same database migrates nothing and sees the same job.
        let second = try Self.open(url, node: "b")
        defer { second.close(removingNode: false) }
        #expect(try second.allJobs() == [job])
        try store.saveQueueSettings(QueueSettings(paused: true, maxActive: 7, limitRate: nil))
        #expect(try second.queueSettings() == QueueSettings(paused: true, maxActive: 7, limitRate: nil))
    }

    @Test func claimsTakeReadyJobsByPriorityThenAgeAndNeverTheSameTwice() throws {
        let url = try TestPostgres.newDatabase()
        let a = try Self.open(url, node: "a")
        let b = try Self.open(url, node: "b")
        defer {
            a.close(removingNode: false)
            b.close(removingNode: false)
        }
        try a.insert(Self.job("old", age: 1))
        try a.insert(Self.job("new", age: 2))
        try a.insert(Self.job("urgent", priority: 5, age: 3))
        try a.insert(Self.job("waits", priority: 9, age: 4, after: ["old"]))
        let first = try a.claim(limit: 2)
        #expect(first.map(\.job.id) == ["urgent", "old"])
        #expect(first.allSatisfy { $0.job.state == .running && $0.lease.owner == "a" && $0.lease.epoch == 1 })
        // b gets what is left; the job waiting for a dependency is not ready.
        #expect(try b.claim(limit: 5).map(\.job.id) == ["new"])
        #expect(try b.claim(limit: 5).isEmpty)
    }

    @Test func concurrentClaimsSplitTheQueue() async throws {
        let url = try TestPostgres.newDatabase()
        let setup = try Self.open(url, node: "setup")
        for index in 0..<40 { try setup.insert(Self.job(String(format: "j%02d", index), age: Double(index))) }
        setup.close(removingNode: true)
        let stores = try (0..<4).map { try Self.open(url, node: "n\($0)") }
        defer { for store in stores { store.close(removingNode: false) } }
        let claimed = await withTaskGroup(of: [String].self) { group in
            for store in stores {
                group.addTask {
                    var mine: [String] = []
                    while let batch = try? store.claim(limit: 3), !batch.isEmpty { mine += batch.map(\.job.id) }
                    return mine
                }
            }
            return await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        let all = claimed.flatMap { $0 }
        #expect(all.count == 40)
        #expect(Set(all).count == 40)
    }

    /// Issue 20, fewer writes: several runs' checkpoints in one transaction, each fenced by its
    /// own lease; a stale one is refused alone.
    @Test func fencedCheckpointsGoTogetherAndAStaleLeaseIsRefusedAlone() async throws {
        let store = try Self.open(TestPostgres.newDatabase(), node: "a")
        defer { store.close(removingNode: false) }
        try store.insert(Self.job("j1"))
        try store.insert(Self.job("j2", age: 1))
        let leases = try store.claim(limit: 2).map(\.lease)
        try #require(leases.count == 2)
        var stale = leases[1]
        stale.epoch += 1
        let checkpoint = DownloadCheckpoint(url: "https://example.com/j", totalBytes: 100, acceptsRanges: true, written: [0..<10])
        #expect(try store.saveCheckpoints([(checkpoint, leases[0]), (checkpoint, stale)]) == [true, false])
        #expect(try store.checkpoint(id: leases[0].jobID) == checkpoint)
        #expect(try store.checkpoint(id: stale.jobID) == nil)
        // The same through the service's group commit.
        let writer = CheckpointWriter(repository: store)
        #expect(try await writer.save(checkpoint, lease: leases[1]) == true)
        #expect(try await writer.save(checkpoint, lease: stale) == false)
        #expect(try await writer.save(nil, lease: leases[0]) == true)
        #expect(try store.checkpoint(id: leases[0].jobID) == nil)
        #expect(try store.checkpoint(id: leases[1].jobID) == checkpoint)
    }

    @Test func aNewEpochFencesTheOldOwnersWrites() throws {
        let url = try TestPostgres.newDatabase()
        let a = try Self.open(url, node: "a", lease: .seconds(1))
        let b = try Self.open(url, node: "b", lease: .seconds(1))
        defer {
            a.close(removingNode: false)
            b.close(removingNode: false)
        }
        try a.insert(Self.job("j"))
        let lease = try #require(try a.claim(limit: 1).first).lease
        var progress = try #require(try a.job(id: "j"))
        progress.bytesDone = 10
        #expect(try a.saveProgress(progress, lease: lease))
        #expect(try a.heartbeat(running: [lease]).isEmpty)
        // a stops heartbeating; its lease expires; b rescues and claims.
        // Only once the lease (1 s, on the database's clock) has expired.
        #expect(try b.rescue(staleAfter: .seconds(60)).isEmpty)
        var rescued: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while rescued.isEmpty, Date() < deadline {
            rescued = try b.rescue(staleAfter: .seconds(60))
            if rescued.isEmpty { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(rescued == ["j"])
        let taken = try #require(try b.claim(limit: 1).first)
        #expect(taken.lease.epoch == 2)
        #expect(taken.lastOwner == "a")
        // Every write of a's is refused now, and changes nothing.
        progress.bytesDone = 999
        #expect(try !a.saveProgress(progress, lease: lease))
        #expect(try !a.saveCheckpoint(DownloadCheckpoint(url: "https://example.com/j"), lease: lease))
        var finished = progress
        finished.state = .completed
        #expect(try !a.finishRun(finished, lease: lease))
        #expect(try a.heartbeat(running: [lease]) == ["j"])
        let stored = try #require(try b.job(id: "j"))
        #expect(stored.state == .running)
        #expect(stored.node == "b")
        #expect(stored.bytesDone == 10)
    }

    @Test func aControlWriteWaitsForTheStateItSawAndReleaseRequeues() throws {
        let (a, claim) = try Self.claimedJob()
        defer { a.close(removingNode: false) }
        var paused = claim.job
        paused.state = .paused
        // Written by a node that still thought the job queued: refused.
        #expect(try !a.update(paused, expectedState: .queued))
        #expect(try a.update(paused, expectedState: .running))
        try a.release(claim.lease)
        let stored = try #require(try a.job(id: "j"))
        #expect(stored.state == .paused)
        #expect(stored.node == nil)
        // A paused job is not claimed; resumed, it is, under a new epoch.
        #expect(try a.claim(limit: 1).isEmpty)
        var resumed = stored
        resumed.state = .queued
        #expect(try a.update(resumed, expectedState: .paused))
        #expect(try a.claim(limit: 1).first?.lease.epoch == 2)
    }

    @Test func controlWritesAreNotifiedAndTheChangeFeedHasThemAndRemovals() async throws {
        let url = try TestPostgres.newDatabase()
        let a = try Self.open(url, node: "a")
        let b = try Self.open(url, node: "b")
        defer {
            a.close(removingNode: false)
            b.close(removingNode: false)
        }
        let signals = b.signals()
        var iterator = signals.makeAsyncIterator()
        #expect(await iterator.next() == .resync)
        let cursor = try b.changes(since: nil).cursor
        try a.insert(Self.job("j"))
        #expect(await iterator.next() == .job("j"))
        try a.delete(id: "j")
        #expect(await iterator.next() == .job("j"))
        let changes = try b.changes(since: cursor)
        #expect(changes.removed == ["j"])
        #expect(try b.nodes().map(\.name) == ["a", "b"])
    }

    /// A progress write taken before a pause and committed after it changed the paused job's
    /// bytes, after the pause had answered its run's last checkpoint (PauseFinalityTests on
    /// PostgreSQL).
    @Test func progressAfterAPauseLeavesThePausedJobsBytes() throws {
        let (a, claim) = try Self.claimedJob()
        defer { a.close(removingNode: false) }
        var paused = claim.job
        paused.state = .paused
        #expect(try a.update(paused, expectedState: .running))
        let answered = try #require(try a.job(id: "j")).bytesDone
        var late = claim.job
        late.bytesDone = answered + 1024
        late.speed = 500
        #expect(try a.saveProgress([(late, claim.lease)]).isEmpty, "the lease still holds: not refused")
        let stored = try #require(try a.job(id: "j"))
        #expect(stored.bytesDone == answered)
        #expect(stored.speed == 0)
        #expect(stored.state == .paused)
        // While it runs, progress is written as before.
        var again = try #require(try a.job(id: "j"))
        again.state = .running
        #expect(try a.update(again, expectedState: .paused))
        #expect(try a.saveProgress([(late, claim.lease)]).isEmpty)
        #expect(try a.job(id: "j")?.bytesDone == answered + 1024)
    }

    @Test func aPauseThatCameWhileTheRunEndedStays() throws {
        let (a, claim) = try Self.claimedJob()
        defer { a.close(removingNode: false) }
        var paused = claim.job
        paused.state = .paused
        #expect(try a.update(paused, expectedState: .running))
        // The run ends in a Retry-After wait (back to the queue): the pause wins.
        var retry = claim.job
        retry.state = .queued
        retry.retryAt = Date().addingTimeInterval(60)
        #expect(try a.finishRun(retry, lease: claim.lease))
        #expect(try a.job(id: "j")?.state == .paused)
        #expect(try a.claim(limit: 1).isEmpty)
    }

    @Test func aCommandOnAStaleViewIsRefusedAndTheViewReadAgain() async throws {
        try await withTemporaryDirectory { directory in
            let url = try TestPostgres.newDatabase()
            let a = try Self.open(url, node: "a")
            let b = try Self.open(url, node: "b")
            defer {
                a.close(removingNode: false)
                b.close(removingNode: false)
            }
            let client = Fetcher()
            func scheduler(_ store: PostgresJobRepository) throws -> JobScheduler {
                var configuration = JobScheduler.Configuration(
                    cacheDirectory: directory.path + "/cache", documentsDirectory: directory.path + "/documents"
                )
                configuration.nodeName = store.nodeName
                return try JobScheduler(configuration: configuration, repository: store, client: client)
            }
            var paused = Self.job("j")
            paused.state = .paused
            try a.insert(paused)
            let onB = try scheduler(b)
            // a resumes it; b, which has not read the change, pauses... and resumes it again.
            var queued = paused
            queued.state = .queued
            #expect(try a.update(queued, expectedState: .paused))
            await #expect(throws: SluiceError.self) { try await onB.resume(id: "j") }
            // b now shows what is stored, and changed nothing.
            #expect(try await onB.job(id: "j")?.state == .queued)
            #expect(try a.job(id: "j")?.state == .queued)
            try await client.shutdown()
        }
    }
}
