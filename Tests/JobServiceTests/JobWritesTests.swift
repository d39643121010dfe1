import Foundation
import JobStore
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// The job changes the scheduler decides, written behind it (`JobWrites`): merged per job,
/// in order, kept while the store fails, and waited for by a command within its budget.
@Suite struct JobWritesTests {
    static func job(_ id: String, _ state: JobState) -> JobSnapshot {
        JobSnapshot(id: id, url: "https://example.com/\(id)", state: state, connections: 1, priority: 0, createdAt: Date())
    }

    /// A store with `ids` in it, queued.
    static func store(_ ids: [String]) async throws -> InMemoryJobRepository {
        let store = InMemoryJobRepository()
        for id in ids { try await store.insert(Self.job(id, .queued)) }
        return store
    }

    @Test func aJobsChangesAreWrittenOnceWithTheLatest() async throws {
        let store = try await Self.store(["a", "b"])
        let writes = JobWrites(repository: store)
        try await withServices([writes]) { () async throws in
            store.freeze()
            writes.put(Self.job("a", .running))
            #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { store.waiting == 1 }, "the first write waits on the store")
            // Merged while the first is on its way: one more write of each job, with its latest.
            writes.put(Self.job("a", .paused))
            writes.put(Self.job("b", .running))
            writes.put(Self.job("b", .paused))
            store.thaw()
            #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { writes.backlog == 0 })
            #expect(try await store.job(id: "a")?.state == .paused)
            #expect(try await store.job(id: "b")?.state == .paused)
            #expect(store.calls["update"] == 3, "a running, then a and b paused: \(store.calls)")
            #expect(writes.transactions == 2)
        }
    }

    @Test func whileTheStoreFailsChangesAreKeptAndWrittenOnceItAnswers() async throws {
        let store = try await Self.store(["a", "b"])
        let writes = JobWrites(repository: store, retryDelay: .milliseconds(20))
        try await withServices([writes]) { () async throws in
            store.fail(true)
            writes.put(Self.job("a", .paused))
            writes.put(
                Self.job("b", .failed),
                deliveries: [
                    WebhookDelivery(id: "d", jobID: "b", event: .failed, url: "http://127.0.0.1:9/hook", body: "{}", createdAt: Date())
                ])
            #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { writes.transactions >= 3 }, "tried again and again")
            #expect(writes.backlog == 2)
            store.fail(false)
            #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { writes.backlog == 0 })
            #expect(try await store.job(id: "a")?.state == .paused)
            #expect(try await store.job(id: "b")?.state == .failed)
            #expect(try await store.deliveries(jobID: "b").map(\.id) == ["d"], "stored with the change, once")
        }
    }

    @Test func aCommandWaitsForItsWriteWithinItsBudgetOnly() async throws {
        let store = try await Self.store(["a"])
        let writes = JobWrites(repository: store)
        try await withServices([writes]) { () async throws in
            store.freeze()
            writes.put(Self.job("a", .paused))
            let started = ContinuousClock.now
            await #expect(throws: SluiceError.self) {
                try await StoreCallBudget.$current.withValue(StoreCallBudget(.milliseconds(300))) { try await writes.stored("a") }
            }
            let waited = ContinuousClock.now - started
            // Its budget, and what a parallel test run's load adds (up to 2 s seen); without the
            // budget it would wait for the thaw, which comes after.
            #expect(waited >= .milliseconds(250) && waited < .seconds(10), "waited \(waited)")
            store.thaw()
            try await writes.stored("a")
            #expect(!writes.isPending("a"))
            #expect(try await store.job(id: "a")?.state == .paused)
        }
    }

    @Test func aForgottenJobsPendingChangeIsNotWritten() async throws {
        let store = try await Self.store(["a", "b"])
        let writes = JobWrites(repository: store)
        try await withServices([writes]) { () async throws in
            store.freeze()
            writes.put(Self.job("b", .running))
            #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { store.waiting == 1 })
            writes.put(Self.job("a", .paused))
            writes.forget("a")
            #expect(!writes.isPending("a"))
            store.thaw()
            #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { writes.backlog == 0 })
            #expect(try await store.job(id: "a")?.state == .queued)
            #expect(try await store.job(id: "b")?.state == .running)
        }
    }

    /// The writing is a service (issue 37, point 2): a change put while it does not run waits
    /// for it, and is written once it runs.
    @Test func changesAreWrittenByTheRunningService() async throws {
        let store = try await Self.store(["a"])
        let writes = JobWrites(repository: store)
        writes.put(Self.job("a", .paused))
        #expect(writes.backlog == 1)
        #expect(store.calls["update"] == nil)
        try await withServices([writes]) { () async throws in
            #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { writes.backlog == 0 })
        }
        #expect(try await store.job(id: "a")?.state == .paused)
        #expect(writes.transactions == 1)
    }

    /// A service cancelled rather than shut down gracefully (the group failing, a test's
    /// end) still writes what is left: a store call in the cancelled task itself would refuse
    /// to start (GRDB checks for cancellation), and the change was lost (a second reading).
    @Test func aCancelledServiceStillWritesWhatIsLeft() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteJobRepository(path: directory.path + "/sluice.sqlite")
            try await store.insert(Self.job("a", .queued))
            let writes = JobWrites(repository: store)
            writes.put(Self.job("a", .paused))
            let cancelled = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                await writes.run()
            }
            await cancelled.value
            #expect(writes.backlog == 0)
            #expect(try await store.job(id: "a")?.state == .paused)
        }
    }

    /// Issue 20: a single node's pause wrote its job on the scheduler's own thread, so a
    /// frozen store held every command behind it; it is answered from memory within the
    /// request's budget now, and stored once the store answers.
    @Test func aPauseWhileTheStoreIsFrozenIsAnsweredFromMemoryAndStoredAfter() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await JobServiceTests.withScheduler(directory, store: store) { scheduler in
                _ = try await scheduler.updateQueue(QueueSettingsPatch(paused: true))
                let id = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/x")).job.id
                let other = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/y")).job.id
                store.freeze()
                let started = ContinuousClock.now
                let paused = try await StoreCallBudget.$current.withValue(StoreCallBudget(.milliseconds(500))) {
                    try await scheduler.pause(id: id)
                }
                let waited = ContinuousClock.now - started
                #expect(paused.state == .paused)
                // Its budget, 0.5 s, and no more than the load of a parallel test run adds; it
                // waited on the frozen store until the test's thaw (never) before.
                #expect(waited < .seconds(5), "the pause answered after \(waited)")
                // Another command is not held behind it either.
                let second = try await StoreCallBudget.$current.withValue(StoreCallBudget(.milliseconds(500))) {
                    try await scheduler.pause(id: other)
                }
                #expect(second.state == .paused)
                #expect(ContinuousClock.now - started < .seconds(10))
                store.thaw()
                #expect(await waitUntil(.seconds(5), every: .milliseconds(10)) { scheduler.writes.backlog == 0 })
                #expect(try await store.job(id: id)?.state == .paused)
                #expect(try await store.job(id: other)?.state == .paused)
            }
        }
    }
}
