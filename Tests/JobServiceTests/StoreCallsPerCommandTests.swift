import DownloadEngine
import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// What a command costs the store (issue 37, point 3), counted by the in-memory store, with
/// runs scripted (`ScriptedEngine`): a pause is at most two writes (its stopped run's last
/// checkpoint, and the job with its state and final bytes together) and no read; a create
/// that starts at once is one write before its run begins.
@Suite struct StoreCallsPerCommandTests {
    static let writes = ["insert", "update", "saveCheckpoints", "delete", "deleteMany", "saveDeliveries", "saveQueueSettings"]

    static func delta(_ before: [String: Int], _ after: [String: Int], _ names: [String]) -> Int {
        names.reduce(0) { $0 + after[$1, default: 0] - before[$1, default: 0] }
    }

    @Test func aPauseIsTwoWritesAndNoRead() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            let engine = ScriptedEngine()
            try await JobServiceTests.withScheduler(directory, store: store, engine: engine) { scheduler in
                let job = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/file")).job
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { engine.runs.count == 1 })
                let run = try #require(engine.runs.first)
                run.step(.progress(1000, total: 4000))
                run.step(.checkpoint(1000, total: 4000))
                run.step(.progress(2500, total: 4000))
                // In flight when the pause comes: the run's last checkpoint covers it.
                run.step(.wrote(3000))
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { run.checkpointedBytes == 1000 })
                #expect(
                    await waitUntil(.seconds(30), every: .milliseconds(5)) { (try? await scheduler.job(id: job.id))??.bytesDone == 2500 })
                // What the create and the progress left to write is written first.
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { scheduler.writes.backlog == 0 })
                let before = store.calls
                let paused = try await scheduler.pause(id: job.id)
                let after = store.calls
                #expect(paused.state == .paused)
                #expect(paused.bytesDone == 3000, "the bytes of the run's last checkpoint, taken without a read")
                #expect(Self.delta(before, after, Self.writes) == 2, "writes: \(before) → \(after)")
                #expect(Self.delta(before, after, ["update"]) == 1, "\(before) → \(after)")
                #expect(Self.delta(before, after, ["saveCheckpoints"]) == 1)
                #expect(
                    Self.delta(before, after, ["checkpoint", "job", "allJobs", "page", "liveJobs"]) == 0, "reads: \(before) → \(after)")
                #expect(try await store.allJobs().first?.bytesDone == 3000)
            }
        }
    }

    @Test func aCreateThatStartsAtOnceIsOneWriteBeforeItsRun() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            let engine = ScriptedEngine()
            try await JobServiceTests.withScheduler(directory, store: store, engine: engine) { scheduler in
                let before = store.calls
                let job = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/file")).job
                #expect(job.state == .running)
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { engine.runs.count == 1 })
                let after = store.calls
                #expect(Self.delta(before, after, Self.writes) == 1, "writes: \(before) → \(after)")
                #expect(Self.delta(before, after, ["insert"]) == 1)
                // The run is told it never ran: it reads no checkpoint.
                #expect(engine.runs.first?.request.options.neverRun == true)
            }
        }
    }
}
