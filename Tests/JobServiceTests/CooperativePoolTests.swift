import DownloadEngine
import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// The scheduler's store calls are awaited: a call waiting on a stalled store must never hold
/// a thread of the cooperative pool, which has one per core and also answers the API and runs
/// every other task.
@Suite struct CooperativePoolTests {
    /// CI hung for 90 minutes: two schedulers' commands waiting on frozen stores held both
    /// threads of a 2-core machine's pool, and the tests that would thaw them never ran
    /// again. Here one scheduler more than the pool has threads waits on its frozen store,
    /// and the test must still see them all waiting; a thread thaws every store after 10 s,
    /// so that before the fix this fails instead of hanging.
    @Test func schedulersWaitingOnFrozenStoresLeaveThePoolFree() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            for name in ["cache", "documents"] {
                try FileManager.default.createDirectory(atPath: directory.path + "/" + name, withIntermediateDirectories: true)
            }
            let client = Fetcher()
            var schedulers: [(JobScheduler, InMemoryJobRepository, String)] = []
            for _ in 0..<count {
                let store = InMemoryJobRepository()
                let scheduler = try await JobScheduler(
                    configuration: .init(cacheDirectory: directory.path + "/cache", documentsDirectory: directory.path + "/documents"),
                    repository: store, client: client
                )
                await scheduler.start()
                let id = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/x", paused: true)).job.id
                schedulers.append((scheduler, store, id))
            }
            let stores = schedulers.map(\.1)
            let (allWaiting, early) = try await withServices(schedulers.flatMap(\.0.storeWriters)) {
                let frozen = FrozenStores(stores)
                let resumes = schedulers.map { scheduler, _, id in Task { try await scheduler.resume(id: id) } }
                // At least one call each: the resume's change is written behind, and its run may
                // make store calls of its own (a checkpoint, its end) while that write waits.
                let allWaiting = await waitUntil(.seconds(8), every: .milliseconds(10)) { stores.allSatisfy { $0.waiting >= 1 } }
                let early = !frozen.thawedByTheTimer
                frozen.thaw()
                for resume in resumes { _ = try await resume.value }
                for (scheduler, _, _) in schedulers { await scheduler.shutdown() }
                return (allWaiting, early)
            }
            try await client.shutdown()
            #expect(allWaiting && early, "\(count) schedulers waiting on their stores left the test no thread")
        }
    }

    /// A read of a finished job waits on the store, which may stall: it ran on the thread that
    /// answers the request, so a few of them held the pool, and reads memory can answer (a
    /// live job) waited behind them. Here one read more than the pool has threads waits on a
    /// frozen store, and a live job must still be read at once.
    @Test func readsOfFinishedJobsWaitingOnAFrozenStoreLeaveThePoolFree() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        try await withTemporaryDirectory { (directory: TemporaryDirectory) async throws in
            let store = try await FinishedJobsInTheStoreTests.store()
            try await JobServiceTests.withScheduler(directory, store: store) { (scheduler: JobScheduler) async throws in
                let frozen = FrozenStores([store])
                let reads = (0..<count).map { _ in Task { try await scheduler.job(id: "c0") } }
                let allWaiting = await waitUntil(.seconds(8), every: .milliseconds(10)) { store.waiting == count }
                let live = try await scheduler.job(id: "p3")
                let early = !frozen.thawedByTheTimer
                frozen.thaw()
                for read in reads { #expect(try await read.value?.state == .completed) }
                #expect(live?.state == .paused)
                #expect(allWaiting && early, "\(count) reads waiting on the store left no thread to answer from memory")
            }
        }
    }

    /// While the store is known not to answer, a read only it can answer is refused at once,
    /// never asked.
    @Test func aReadOfTheStoreIsRefusedAtOnceWhileItDoesNotAnswer() async throws {
        let asked = Atomic(false)
        await #expect(throws: SluiceError.self) {
            try await JobReads.readingStore(false) { asked.store(true, ordering: .relaxed) }
        }
        let wasAsked = asked.load(ordering: .relaxed)
        #expect(!wasAsked)
        let answer = try await JobReads.readingStore(true) { 7 }
        #expect(answer == 7)
    }

    /// The webhook loop and its attempts run on the pool too; they read and saved their
    /// deliveries in place, so a stalled store held a pool thread per loop and per attempt.
    @Test func webhookLoopsWaitingOnFrozenStoresLeaveThePoolFree() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        let client = Fetcher()
        let stores = (0..<count).map { _ in InMemoryJobRepository() }
        let frozen = FrozenStores(stores)
        let loops = stores.map { store in
            Task { await WebhookDispatcher(configuration: .init(), repository: store, client: client).run() }
        }
        // Each loop waits on its store at least once (the receivers' read, and the retention's
        // sweep beside it).
        let allWaiting = await waitUntil(.seconds(8), every: .milliseconds(10)) { stores.allSatisfy { $0.waiting >= 1 } }
        let early = !frozen.thawedByTheTimer
        frozen.thaw()
        for loop in loops { loop.cancel() }
        for loop in loops { await loop.value }
        try await client.shutdown()
        #expect(allWaiting && early, "\(count) webhook loops waiting on their stores left the test no thread")
    }
}

/// Stores frozen for a test that waits on them, thawed by a plain thread after 10 s whatever
/// happens: a test whose waits held the whole pool fails then, instead of hanging the run.
final class FrozenStores: Sendable {
    private let stores: [InMemoryJobRepository]
    private let timerFired = Atomic(false)

    init(_ stores: [InMemoryJobRepository]) {
        self.stores = stores
        for store in stores { store.freeze() }
        Thread.detachNewThread { [self] in
            Thread.sleep(forTimeInterval: 10)
            timerFired.store(true, ordering: .relaxed)
            thaw()
        }
    }

    /// Whether the timer thawed them (the test's own thaw came too late).
    var thawedByTheTimer: Bool { timerFired.load(ordering: .relaxed) }

    func thaw() {
        for store in stores { store.thaw() }
    }
}
