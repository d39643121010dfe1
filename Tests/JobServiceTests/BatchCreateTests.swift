import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// `createAll`: a batch of creates is one store write, and one refused job (or a store that
/// does not answer) makes none of them.
@Suite struct BatchCreateTests {
    @Test func aBatchIsOneStoreWriteAndItsJobsAreShownInOrder() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await JobServiceTests.withScheduler(directory, store: store) { scheduler in
                _ = try await scheduler.updateQueue(QueueSettingsPatch(paused: true))
                let before = store.calls["insert", default: 0]
                let requests = try (0..<250).map { try JobServiceTests.request("http://127.0.0.1:9/\($0)", paused: $0 % 2 == 0) }
                let made = try await scheduler.createAll(requests)
                #expect(store.calls["insert", default: 0] - before == 1)
                #expect(made.map(\.url) == requests.map(\.url))
                #expect(made.filter { $0.state == .paused }.count == 125)
                #expect(made.filter { $0.state == .queued }.count == 125)
                #expect(try await store.allJobs().count == 250)
                // Newest first, as any list: the last of the batch is the newest.
                let listed = try await scheduler.list(states: nil, limit: 1000, after: nil)
                #expect(listed.map(\.id) == made.map(\.id).reversed())
            }
        }
    }

    @Test func oneRefusedJobRefusesTheBatchNamingItsPlace() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await JobServiceTests.withScheduler(directory, store: store) { scheduler in
                var requests = try (0..<3).map { try JobServiceTests.request("http://127.0.0.1:9/\($0)") }
                requests[2].after = ["no-such-job"]
                let error = await #expect(throws: SluiceError.self) { try await scheduler.createAll(requests) }
                #expect(error?.field == "jobs[2].after")
                #expect(error?.message.hasPrefix("jobs[2]: ") == true)
                #expect(try await store.allJobs().isEmpty)
                #expect(try await scheduler.list(states: nil, limit: 10, after: nil).isEmpty)
            }
        }
    }

    @Test func aStoreThatCannotWriteMakesNoneOfThem() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            try await JobServiceTests.withScheduler(directory, store: store) { scheduler in
                store.fail(true)
                let requests = try (0..<3).map { try JobServiceTests.request("http://127.0.0.1:9/\($0)") }
                await #expect(throws: SluiceError.self) { try await scheduler.createAll(requests) }
                store.fail(false)
                #expect(try await scheduler.list(states: nil, limit: 10, after: nil).isEmpty)
                #expect(scheduler.countsByState().values.reduce(0, +) == 0)
            }
        }
    }

    /// A create refused after it read the finished jobs its `after` names (a batch refused
    /// at a later job, or a dependency that does not exist) keeps nothing of them: their
    /// states stayed kept for jobs that were never made, one more with each such request.
    @Test func aRefusedCreateKeepsNoStateOfTheJobsItNamed() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            let engine = ScriptedEngine()
            try await JobServiceTests.withScheduler(directory, store: store, engine: engine) { scheduler in
                let done = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/done")).job.id
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { engine.runs.count == 1 })
                let run = try #require(engine.runs.first)
                run.step(.progress(10, total: 10))
                run.step(.finish)
                // Completed, stored, and let go from the table.
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { scheduler.jobs[done] == nil })
                var batch = try (0..<2).map { try JobServiceTests.request("http://127.0.0.1:9/\($0)") }
                batch[0].after = [done]
                batch[1].after = ["no-such-job"]
                await #expect(throws: SluiceError.self) { try await scheduler.createAll(batch) }
                #expect(await scheduler.finishedDependencies.isEmpty)
                var single = try JobServiceTests.request("http://127.0.0.1:9/2")
                single.after = [done, "no-such-job"]
                await #expect(throws: SluiceError.self) { try await scheduler.create(single) }
                #expect(await scheduler.finishedDependencies.isEmpty)
                // A job made waiting for it keeps its state, as before.
                var made = try JobServiceTests.request("http://127.0.0.1:9/3")
                made.after = [done]
                _ = try await scheduler.create(made)
                #expect(await scheduler.finishedDependencies[done] == .completed)
            }
        }
    }
}
