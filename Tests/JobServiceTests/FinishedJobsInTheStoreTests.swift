import DownloadEngine
import Foundation
import JobService
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// Issue 20, point 3: a single node holds its live jobs; finished ones live in the store, read
/// from there by id, by page and in the counts.
@Suite struct FinishedJobsInTheStoreTests {
    static func job(_ id: String, _ state: JobState, second: Double, after: [String] = []) -> JobSnapshot {
        var job = JobSnapshot(
            id: id, url: "http://127.0.0.1:9/\(id)", state: state, connections: 1, priority: 0,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000 + second)
        )
        job.after = after
        if state == .failed { job.error = .init(code: "network", message: "refused") }
        if state == .completed { job.sha256 = String(repeating: "0", count: 64) }
        return job
    }

    /// A store of five finished and two paused jobs (`p2` waits for `c1`).
    static func store() async throws -> InMemoryJobRepository {
        let store = InMemoryJobRepository()
        let jobs = [
            job("c0", .completed, second: 0), job("c1", .completed, second: 1), job("f2", .failed, second: 2),
            job("p3", .paused, second: 3), job("c4", .completed, second: 4), job("f5", .failed, second: 5),
            job("p6", .paused, second: 6, after: ["c1"]),
        ]
        for job in jobs { try await store.insert(job) }
        return store
    }

    @Test func aStartLoadsLiveJobsOnlyAndReadsFinishedOnesFromTheStore() async throws {
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = try await Self.store()
            try await JobServiceTests.withScheduler(directory, store: store) { (scheduler: JobScheduler) async throws in
                #expect(store.calls["allJobs"] == nil)
                #expect(store.calls["liveJobs"] == 1)
                #expect(scheduler.jobs.count == 2)
                let counts = scheduler.countsByState()
                #expect(counts[.completed] == 3 && counts[.failed] == 2 && counts[.paused] == 2)
                #expect(try await scheduler.job(id: "f2")?.error?.message == "refused")
                #expect(try await scheduler.job(id: "nope") == nil)
                #expect(try await scheduler.list(states: [.completed], limit: 10).map(\.id) == ["c4", "c1", "c0"])
                #expect(try await scheduler.list(limit: 4).map(\.id) == ["p6", "f5", "c4", "p3"])
                #expect(try await scheduler.list(limit: 4, after: "c4").map(\.id) == ["p3", "f2", "c1", "c0"])
                #expect(try await scheduler.list(limit: 2, after: "p3").map(\.id) == ["f2", "c1"])
                // Past an offset, placed by the store, which holds every job.
                #expect(try await scheduler.list(limit: 3, offset: 2).map(\.id) == ["c4", "p3", "f2"])
                #expect(try await scheduler.list(states: [.completed], limit: 5, offset: 1).map(\.id) == ["c1", "c0"])
                // A key that made a job now finished still names it.
                try await store.insert(Self.job("k7", .completed, second: 7), idempotencyKey: "key-7")
                let replay = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/other"), idempotencyKey: "key-7")
                #expect(replay.replayed && replay.job.id == "k7")
                // docs/api.md, "Events": the event stream's first snapshot has the stored jobs
                // too, oldest first; a stream of one stored job starts with it.
                let all = try await scheduler.subscribe()
                all.changes.cancel()
                #expect(all.initial.map(\.event.jobID) == ["c0", "c1", "f2", "p3", "c4", "f5", "p6", "k7"])
                let one = try await scheduler.subscribe(jobID: "c1")
                one.changes.cancel()
                #expect(one.initial.map(\.event.jobID) == ["c1"])
                // A paused job waiting for a completed one that is not held still sees it done.
                #expect(try await scheduler.job(id: "p6")?.waitingFor == [])
            }
        }
    }

    @Test func commandsOnAStoredJobReadItBackAndLetItGoAgain() async throws {
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = try await Self.store()
            try await JobServiceTests.withScheduler(directory, store: store) { (scheduler: JobScheduler) async throws in
                // A completed job refuses a pause (409), not "no job" (404).
                let refusal = await #expect(throws: SluiceError.self) { try await scheduler.pause(id: "c0") }
                #expect(refusal?.code == .invalidTransition)
                #expect(scheduler.jobs["c0"] == nil)
                // A failed one paused is live again, and held.
                let resumed = try await scheduler.pause(id: "f5")
                #expect(resumed.state == .paused)
                #expect(scheduler.jobs["f5"]?.state == .paused)
                #expect(scheduler.countsByState()[.failed] == 1)
                // A delete of a stored one removes it from the store and the counts.
                try await scheduler.delete(id: "c4", deleteFile: false)
                #expect(try await store.job(id: "c4") == nil)
                #expect(scheduler.countsByState()[.completed] == 2)
                // Deleting every completed job reaches the stored ones.
                #expect(try await scheduler.deleteAll(states: [.completed], deleteFile: false) == 2)
                #expect(scheduler.countsByState()[.completed, default: 0] == 0)
                #expect(try await store.countsByState()[.completed] == nil)
            }
        }
    }

    /// "Clear finished" over many stored jobs read every one of them into the table, then
    /// removed them one transaction each: a million finished jobs were a million held and a
    /// million commits. They go a page at a time, each page one transaction.
    @Test func clearingManyStoredJobsRemovesThemAPageAtATime() async throws {
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = InMemoryJobRepository()
            for index in 0..<1200 { try await store.insert(Self.job("c\(index)", .completed, second: Double(index))) }
            try await store.insert(Self.job("f", .failed, second: 2000))
            try await store.insert(Self.job("w", .paused, second: 2001, after: ["c7"]))
            try await JobServiceTests.withScheduler(directory, store: store) { (scheduler: JobScheduler) async throws in
                let events = try await scheduler.subscribe()
                defer { events.changes.cancel() }
                #expect(try await scheduler.deleteAll(states: [.completed], deleteFile: false) == 1200)
                #expect(store.calls["deleteMany"] == 3, "pages of 500")
                #expect(store.calls["delete"] == 1, "only the job another waits for goes alone")
                #expect(scheduler.countsByState()[.completed, default: 0] == 0)
                #expect(scheduler.countsByState()[.failed] == 1)
                #expect(try await store.countsByState()[.completed] == nil)
                #expect(scheduler.jobs.count == 1, "only the live job is held")
                #expect(scheduler.jobs["w"]?.after == [], "the job that waited for c7 forgets it")
                #expect(try await scheduler.job(id: "c100") == nil)
            }
        }
    }

    /// A deleted job kept its state as a finished dependency: a new job could still name it in
    /// `after`, and was taken as waiting for a completed job.
    @Test func aDeletedDependencyCannotBeNamedAgain() async throws {
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = try await Self.store()
            try await JobServiceTests.withScheduler(directory, store: store) { (scheduler: JobScheduler) async throws in
                // p6 waits for c1, which the store holds alone.
                try await scheduler.delete(id: "c1", deleteFile: false)
                #expect(scheduler.jobs["p6"]?.after == [])
                let request = try JSONDecoder().decode(
                    CreateJobRequest.self, from: Data(#"{"url":"http://127.0.0.1:9/x","paused":true,"after":["c1"]}"#.utf8)
                )
                let refusal = await #expect(throws: SluiceError.self) { try await scheduler.create(request) }
                #expect(refusal?.code == .invalidField)
                #expect(refusal?.field == "after")
            }
        }
    }

    /// Clearing a million stored jobs takes about 30 s, all of it in the scheduler's turn: a
    /// shutdown meanwhile waited for the whole clear, where the service must exit in 5 s.
    @Test func aShutdownEndsAClearBetweenTwoPages() async throws {
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = InMemoryJobRepository()
            for index in 0..<3000 { try await store.insert(Self.job("c\(index)", .completed, second: Double(index))) }
            for name in ["cache", "documents"] {
                try FileManager.default.createDirectory(atPath: directory.path + "/" + name, withIntermediateDirectories: true)
            }
            let client = Fetcher()
            let scheduler = try await JobScheduler(
                configuration: .init(cacheDirectory: directory.path + "/cache", documentsDirectory: directory.path + "/documents"),
                repository: store, client: client
            )
            let cleared = try await withServices(scheduler.storeWriters) {
                await scheduler.start()
                store.holdBulkDeletes()
                let clearing = Task { try await scheduler.deleteAll(states: [.completed], deleteFile: false) }
                #expect(await waitUntil(.seconds(10), every: .milliseconds(5)) { store.waiting == 1 }, "the first page waits on the store")
                // The shutdown asks for the scheduler's turn while the page waits.
                let asked = Mutex(false)
                let stopping = Task {
                    asked.withLock { $0 = true }
                    await scheduler.shutdown()
                }
                #expect(await waitUntil(.seconds(10), every: .milliseconds(1)) { asked.withLock { $0 } })
                store.releaseBulkDeletes()
                await stopping.value
                return try await clearing.value
            }
            try await client.shutdown()
            #expect(cleared < 3000, "the clear went on past the shutdown")
            #expect(cleared >= 500)
            #expect(try await store.countsByState()[.completed, default: 0] == 3000 - cleared)
        }
    }

    /// A bulk resume read the stored failed jobs back without the states of what they wait
    /// for: a failed job waiting for a stored completed one lost it from its `after`.
    @Test func aBulkResumeKeepsAStoredDependencyOfAStoredJob() async throws {
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = InMemoryJobRepository()
            try await store.insert(Self.job("d", .completed, second: 0))
            try await store.insert(Self.job("f", .failed, second: 1, after: ["d"]))
            try await JobServiceTests.withScheduler(directory, store: store) { (scheduler: JobScheduler) async throws in
                _ = try await scheduler.pauseAll(.states([.failed]))
                #expect(scheduler.jobs["f"]?.state == .paused)
                #expect(scheduler.jobs["f"]?.after == ["d"])
                _ = try await scheduler.resumeAll(.states([.paused]))
                #expect(scheduler.jobs["f"]?.after == ["d"], "its completed dependency stays named")
            }
        }
    }

    /// `DELETE /jobs?state=completed&deleteFile=true` over stored jobs removes their files,
    /// as the single delete does, and never a name that would leave the directory.
    @Test func clearingStoredJobsWithTheirFilesRemovesThem() async throws {
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = InMemoryJobRepository()
            for (index, name) in ["a.bin", "b.bin", "../escape.bin"].enumerated() {
                var job = Self.job("c\(index)", .completed, second: Double(index))
                job.path = name
                try await store.insert(job)
            }
            try await JobServiceTests.withScheduler(directory, store: store) { (scheduler: JobScheduler) async throws in
                let documents = directory.path + "/documents"
                for name in ["a.bin", "b.bin", "kept.bin"] {
                    #expect(FileManager.default.createFile(atPath: documents + "/" + name, contents: Data("x".utf8)))
                }
                #expect(FileManager.default.createFile(atPath: directory.path + "/escape.bin", contents: Data("x".utf8)))
                #expect(try await scheduler.deleteAll(states: [.completed], deleteFile: true) == 3)
                #expect(try FileManager.default.contentsOfDirectory(atPath: documents) == ["kept.bin"])
                #expect(FileManager.default.fileExists(atPath: directory.path + "/escape.bin"))
            }
        }
    }
}
