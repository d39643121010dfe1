import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 10 without a window (issue 37, point 4): a pause or a delete that comes while a run
/// has all its bytes and verifies them stops it; one that comes while it places its file
/// (past its last point of return) waits for it, and the answer is final. Runs are scripted
/// (`ScriptedEngine`), so each command lands at the point it is meant to.
@Suite struct EndOfRunCommandTests {
    /// A scheduler whose one job's run has reported all of its 4,000 bytes.
    static func withARunWithAllItsBytes(
        _ body: @Sendable (JobScheduler, String, ScriptedEngine, InMemoryJobRepository) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            let engine = ScriptedEngine()
            try await JobServiceTests.withScheduler(directory, store: store, engine: engine) { scheduler in
                let id = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/file")).job.id
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { engine.runs.count == 1 })
                let run = try #require(engine.runs.first)
                run.step(.progress(4000, total: 4000))
                #expect(
                    await waitUntil(.seconds(30), every: .milliseconds(5)) { (try? await scheduler.job(id: id))??.bytesDone == 4000 })
                try await body(scheduler, id, engine, store)
            }
        }
    }

    @Test func aPauseWhileTheRunVerifiesStopsItAndAResumeFinishesTheJob() async throws {
        try await Self.withARunWithAllItsBytes { scheduler, id, engine, _ in
            let paused = try await scheduler.pause(id: id)
            #expect(paused.state == .paused)
            #expect(paused.bytesDone == 4000, "the stopped run's last checkpoint")
            #expect(try await scheduler.job(id: id)?.state == .paused)
            _ = try await scheduler.resume(id: id)
            #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { engine.runs.count == 2 })
            let second = try #require(engine.runs.last)
            second.step(.progress(4000, total: 4000))
            second.step(.finish)
            #expect(
                await waitUntil(.seconds(30), every: .milliseconds(5)) { (try? await scheduler.job(id: id))??.state == .completed })
        }
    }

    @Test func aPauseWhileTheRunPlacesItsFileWaitsForItAndAnswersCompleted() async throws {
        try await Self.withARunWithAllItsBytes { scheduler, id, engine, _ in
            let run = try #require(engine.runs.first)
            run.step(.commit)
            #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { run.isCommitted })
            let pausing = Task { try await scheduler.pause(id: id) }
            // The pause has reached the run, which goes on: only its end answers the pause.
            #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { run.stopAsked })
            run.finishCommitted()
            let answer = try await pausing.value
            #expect(answer.state == .completed)
            #expect(try await scheduler.job(id: id)?.state == .completed)
            #expect(engine.runs.count == 1)
        }
    }

    @Test func aDeleteWhileTheRunVerifiesStopsItAndLeavesNoJob() async throws {
        try await Self.withARunWithAllItsBytes { scheduler, id, engine, store in
            try await scheduler.delete(id: id, deleteFile: true)
            #expect(try await scheduler.job(id: id) == nil)
            #expect(try await store.job(id: id) == nil)
            #expect(engine.runs.count == 1)
        }
    }

    @Test func aDeleteWhileTheRunPlacesItsFileWaitsForItAndLeavesNoJob() async throws {
        try await Self.withARunWithAllItsBytes { scheduler, id, engine, store in
            let run = try #require(engine.runs.first)
            run.step(.commit)
            #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { run.isCommitted })
            let deleting = Task { try await scheduler.delete(id: id, deleteFile: true) }
            #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { run.stopAsked })
            run.finishCommitted()
            try await deleting.value
            #expect(try await scheduler.job(id: id) == nil)
            #expect(try await store.job(id: id) == nil)
            #expect(engine.runs.count == 1)
        }
    }

    /// A resume whose run fails at once answers the job as its failure left it. It answered
    /// 404 "no job" when the failed job had been stored and left the table before the
    /// answer was read (the in-process API tests, where a 404 comes back at once).
    @Test func aResumeWhoseRunFailsAtOnceAnswersTheFailedJob() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            let engine = ScriptedEngine()
            engine.failRuns(with: SluiceError(.httpStatus, "the server answered HTTP 404"))
            try await JobServiceTests.withScheduler(directory, store: store, engine: engine) { scheduler in
                let id = try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:9/file")).job.id
                #expect(await waitUntil(.seconds(30), every: .milliseconds(5)) { (try? await scheduler.job(id: id))??.state == .failed })
                for attempt in 1...5 {
                    let answer = try await scheduler.resume(id: id)
                    #expect([.queued, .running, .failed].contains(answer.state), "attempt \(attempt)")
                    #expect(
                        await waitUntil(.seconds(30), every: .milliseconds(5)) { (try? await scheduler.job(id: id))??.state == .failed })
                }
                #expect(engine.runs.count == 6)
            }
        }
    }
}
