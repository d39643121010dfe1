import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// Commands whose store calls are awaited interleave at each one: two at once must still
/// make the answers one command at a time would (the in-memory store frozen under both).
@Suite struct InterleavedCommandsTests {
    /// Two creates with one idempotency key, both waiting on the store: one job, the other
    /// answer a replay of it (each looks the key up before either inserts; the second waits
    /// for the create under way with its key).
    @Test func twoCreatesWithOneKeyAtOnceMakeOneJob() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await JobServiceTests.withScheduler(directory, store: store) { scheduler in
                _ = try await scheduler.updateQueue(QueueSettingsPatch(paused: true))
                store.freeze()
                let request = try JobServiceTests.request("http://127.0.0.1:9/once")
                async let first = scheduler.create(request, idempotencyKey: "key-once")
                async let second = scheduler.create(request, idempotencyKey: "key-once")
                #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { store.waiting == 2 }, "both look the key up")
                store.thaw()
                let (a, b) = try await (first, second)
                #expect(a.job.id == b.job.id)
                #expect([a.replayed, b.replayed].filter { $0 }.count == 1)
                #expect(try await store.allJobs().count == 1)
            }
        }
    }

    /// Two creates with one slot free, both inserting at once: one starts, the other queues
    /// (both were stored running once each decided before the other's insert returned).
    @Test func twoCreatesForOneFreeSlotStartOne() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await JobServiceTests.withScheduler(directory, store: store, maxActive: 1) { scheduler in
                store.freeze()
                async let first = scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/a"))
                async let second = scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/b"))
                #expect(await waitUntil(.seconds(5), every: .milliseconds(5)) { store.waiting == 2 })
                store.thaw()
                let (a, b) = try await (first, second)
                let answered = [a.job.state, b.job.state]
                #expect(answered.filter { $0 == .running }.count == 1, "answered \(answered)")
            }
        }
    }
}
