import Foundation
import JobService
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// A pause's answer is final (issue 10, issue 20 point 5): a run that has passed its last
/// point of return when the pause comes places its file, and the pause says so.
@Suite struct PauseWhilePlacingTests {
    /// A scheduler (pause limit 200 ms) whose job of 1 MiB has verified its file and waits,
    /// past its last point of return, on the store for its placement intent; `body` gets the
    /// scheduler, the job's id and the store (whose `releasePlacements()` lets it go on).
    static func withARunPlacingItsFile(
        seed: Int, _ body: @Sendable (JobScheduler, String, InMemoryJobRepository, TemporaryDirectory) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let store = InMemoryJobRepository()
                store.holdPlacements()
                try await JobServiceTests.withScheduler(directory, store: store, settleLimit: .milliseconds(200)) { scheduler in
                    let url = "http://127.0.0.1:\(port)/testdata/1M?seed=\(seed)"
                    let id = try await scheduler.create(try JobServiceTests.request(url)).job.id
                    #expect(await waitUntil(.seconds(30), every: .milliseconds(10)) { store.waiting == 1 }, "the run saves its intent")
                    try await body(scheduler, id, store, directory)
                }
            }
        }
    }

    /// CI failed once: a pause answered `paused` and the job was `completed` right after,
    /// its run having been placing its file when the pause's wait for it ran out.
    @Test func aPauseWhileTheFileIsPlacedWaitsForItAndAnswersCompleted() async throws {
        try await Self.withARunPlacingItsFile(seed: 7) { scheduler, id, store, directory in
            let answered = Mutex(false)
            let pausing = Task {
                defer { answered.withLock { $0 = true } }
                return try await scheduler.pause(id: id)
            }
            // Five times the pause's limit for a run that can still stop: this one cannot.
            let early = await waitUntil(.seconds(1), every: .milliseconds(20)) { answered.withLock { $0 } }
            store.releasePlacements()
            let pause = try await pausing.value
            #expect(!early, "the pause answered while the file was being placed")
            #expect(pause.state == .completed)
            #expect(try await scheduler.job(id: id)?.state == .completed)
            let placed = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/documents")
            #expect(placed.count == 1, "\(placed)")
        }
    }

    /// The same through a bulk pause: the job, completed and let go by the table meanwhile,
    /// was left out of the answer.
    @Test func aBulkPauseWhileTheFileIsPlacedAnswersTheJobCompleted() async throws {
        try await Self.withARunPlacingItsFile(seed: 8) { scheduler, id, store, _ in
            let pausing = Task { try await scheduler.pauseAll(.ids([id])) }
            #expect(await waitUntil(.seconds(5), every: .milliseconds(10)) { scheduler.jobs[id]?.state == .paused })
            store.releasePlacements()
            let answer = try await pausing.value
            #expect(answer.map(\.id) == [id])
            #expect(answer.first?.state == .completed)
        }
    }

    /// A delete with its file while the file is placed (issue 10, once a test with windows of
    /// time): the delete waits for the placement, then removes the placed file, the partial
    /// one and the job.
    @Test func aDeleteWithItsFileWhileTheFileIsPlacedLeavesNothing() async throws {
        try await Self.withARunPlacingItsFile(seed: 9) { scheduler, id, store, directory in
            let deleting = Task { try await scheduler.delete(id: id, deleteFile: true) }
            // The job is gone from the table once the store removed it; the delete waits for
            // the run.
            #expect(await waitUntil(.seconds(30), every: .milliseconds(10)) { scheduler.jobs[id] == nil })
            store.releasePlacements()
            try await deleting.value
            #expect(try await scheduler.job(id: id) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/documents").isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/cache").isEmpty)
        }
    }
}
