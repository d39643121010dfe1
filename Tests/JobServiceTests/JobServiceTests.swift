import DownloadEngine
import Foundation
import JobService
import ServiceLifecycle
import SluiceCore
import SluiceTestSupport
import Testing

/// The job service reached without HTTP: `JobScheduler` over the in-memory store (every call
/// counted, and frozen at will) and the real engine against the test origin.
@Suite struct JobServiceTests {
    /// A started scheduler on `store`, shut down (with its client) after `body`.
    static func withScheduler(
        _ directory: TemporaryDirectory, store: InMemoryJobRepository, maxActive: Int = 3, settleLimit: Duration = .seconds(5),
        engine: (any RunEngine)? = nil, client makeClient: () -> Fetcher = { Fetcher() },
        configure: (inout JobScheduler.Configuration) -> Void = { _ in }, _ body: (JobScheduler) async throws -> Void
    ) async throws {
        var configuration = try configuration(directory, maxActive: maxActive, settleLimit: settleLimit)
        configure(&configuration)
        let client = makeClient()
        try await running(
            client, { try await JobScheduler(configuration: configuration, repository: store, client: client, engine: engine) },
            services: \.storeWriters, body)
    }

    /// A runner's configuration over `directory`'s `cache` and `documents`, made if missing.
    static func configuration(
        _ directory: TemporaryDirectory, maxActive: Int, settleLimit: Duration
    ) throws -> JobScheduler.Configuration {
        for name in ["cache", "documents"] {
            try FileManager.default.createDirectory(atPath: directory.path + "/" + name, withIntermediateDirectories: true)
        }
        var configuration = JobScheduler.Configuration(
            cacheDirectory: directory.path + "/cache", documentsDirectory: directory.path + "/documents", maxActive: maxActive
        )
        configuration.settleLimit = settleLimit
        return configuration
    }

    /// The scheduler `make` returns, started with `services` running beside it, shut down
    /// after `body`; `client` is shut down in every case (a client dropped unclosed traps).
    static func running(
        _ client: Fetcher, _ make: () async throws -> JobScheduler, services: (JobScheduler) -> [any Service],
        _ body: (JobScheduler) async throws -> Void
    ) async throws {
        do {
            let scheduler = try await make()
            try await withServices(services(scheduler)) {
                await scheduler.start()
                do {
                    try await body(scheduler)
                } catch {
                    await scheduler.shutdown()
                    throw error
                }
                await scheduler.shutdown()
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    static func request(_ url: String, paused: Bool = false) throws -> CreateJobRequest {
        try JSONDecoder().decode(CreateJobRequest.self, from: Data(#"{"url":"\#(url)","paused":\#(paused)}"#.utf8))
    }

    /// A create as `POST /jobs` takes it, from its JSON fields.
    static func request(_ fields: [String: Any]) throws -> CreateJobRequest {
        try JSONDecoder().decode(CreateJobRequest.self, from: JSONSerialization.data(withJSONObject: fields))
    }

    /// Polls the job until `condition` holds (30 s at most); the job as it is then.
    @discardableResult
    static func waitFor(
        _ id: String, on scheduler: JobScheduler, _ condition: @escaping (JobSnapshot) -> Bool
    ) async throws -> JobSnapshot {
        var last: JobSnapshot?
        let met = try await waitUntil(.seconds(30), every: .milliseconds(20)) {
            last = try await scheduler.job(id: id)
            return last.map(condition) ?? false
        }
        let job = try #require(last, "no job \(id)")
        #expect(met, "job \(id) is \(job.state) after 30 s")
        return job
    }

    /// Whether the finished job's file holds the origin's bytes of `/testdata/SIZE?seed=SEED`.
    static func holdsTestData(_ job: JobSnapshot, in directory: TemporaryDirectory, size: Int, seed: UInt64 = 0) -> Bool {
        guard let path = job.path, let data = FileManager.default.contents(atPath: directory.path + "/documents/" + path) else {
            return false
        }
        return data.count == size && Array(data) == TestDataContent(seed: seed).bytes(0..<Int64(size))
    }

    /// Issue 20: reads came through the scheduler's actor, which waited on its store: with
    /// the store frozen under a command, `GET /jobs/ID` waited as long as the store did.
    @Test func readsAreAnsweredWhileACommandWaitsOnAFrozenStore() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await Self.withScheduler(directory, store: store) { scheduler in
                var ids: [String] = []
                for index in 0..<3 {
                    ids.append(try await scheduler.create(try Self.request("http://127.0.0.1:9/\(index)", paused: true)).job.id)
                }
                store.freeze()
                // The resume writes the store: it waits, holding the scheduler.
                let first = ids[0]
                let resuming = Task { try await scheduler.resume(id: first) }
                // At least the resume's write (its run may wait on a checkpoint's write too).
                #expect(await waitUntil(.seconds(5), every: .milliseconds(20)) { store.waiting >= 1 }, "the resume waits on the store")
                let start = ContinuousClock.now
                for _ in 0..<50 {
                    #expect(try await scheduler.job(id: ids[1])?.state == .paused)
                    #expect(try await scheduler.list(states: nil, limit: 10, after: nil).count == 3)
                    // The resumed job is already out of `paused` in memory; its write waits.
                    #expect(scheduler.countsByState()[.paused] == 2)
                    #expect(scheduler.queue().counts.values.reduce(0, +) == 3)
                }
                let took = ContinuousClock.now - start
                store.thaw()
                _ = try await resuming.value
                #expect(took < .milliseconds(500), "50 rounds of reads took \(took) with the store frozen")
            }
        }
    }

    /// Issue 20: a job that starts at once was stored queued, then running (two writes), and
    /// its run asked the store twice for a checkpoint it could not have.
    @Test func aJobThatStartsAtOnceIsStoredOnceAndReadsNoCheckpoint() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let store = InMemoryJobRepository()
                try await Self.withScheduler(directory, store: store) { scheduler in
                    let created = try await scheduler.create(try Self.request("http://127.0.0.1:\(port)/testdata/2M?rate=1M")).job
                    #expect(created.state == .running)
                    #expect(try await store.allJobs().first?.state == .running, "stored running by the creation's insert")
                    #expect(store.calls["insert"] == 1)
                    #expect(store.calls["update", default: 0] == 0, "no second write to start it")
                    #expect(
                        try await waitUntil(.seconds(20), every: .milliseconds(20)) {
                            try await scheduler.job(id: created.id)?.state == .completed
                        })
                    #expect(store.calls["checkpoint", default: 0] == 0, "no store read for a checkpoint a new job cannot have")
                }
            }
        }
    }

    /// Counts by state are kept as jobs change, not counted by a scan; they match a recount.
    @Test func countsFollowEveryChange() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await Self.withScheduler(directory, store: store, maxActive: 1) { scheduler in
                // A paused queue: nothing runs, so every state below is the last one.
                _ = try await scheduler.updateQueue(QueueSettingsPatch(paused: true))
                var ids: [String] = []
                for index in 0..<6 {
                    ids.append(try await scheduler.create(try Self.request("http://127.0.0.1:9/\(index)", paused: index < 4)).job.id)
                }
                _ = try await scheduler.resume(id: ids[0])
                _ = try await scheduler.pause(id: ids[5])
                try await scheduler.delete(id: ids[1], deleteFile: false)
                let all = try await scheduler.list(states: nil, limit: 100, after: nil)
                var recount = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })
                for job in all { recount[job.state, default: 0] += 1 }
                #expect(all.count == 5)
                #expect(scheduler.countsByState() == recount)
                #expect(recount[.queued] == 2 && recount[.paused] == 3)
            }
        }
    }
}
