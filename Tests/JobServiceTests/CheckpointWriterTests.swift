import DownloadEngine
import Foundation
import JobService
import JobStore
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 20, "fewer writes per job": the checkpoints of many runs are committed together.
@Suite struct CheckpointWriterTests {
    static func checkpoint(_ id: String, bytes: Int64) -> DownloadCheckpoint {
        DownloadCheckpoint(url: "https://example.com/\(id)", totalBytes: 1 << 20, acceptsRanges: true, written: [0..<bytes])
    }

    static func store(jobs: Int) async throws -> InMemoryJobRepository {
        let store = InMemoryJobRepository()
        for index in 0..<jobs {
            try await store.insert(
                JobSnapshot(
                    id: "j\(index)", url: "https://example.com/j\(index)", state: .running, connections: 1, priority: 0, createdAt: Date()))
        }
        return store
    }

    /// Sixteen runs checkpoint while a commit is under way: theirs go in one more commit,
    /// not sixteen, and each save returns only once its own is stored.
    @Test func savesThatComeDuringACommitGoTogetherInTheNext() async throws {
        let store = try await Self.store(jobs: 17)
        let writer = CheckpointWriter(repository: store)
        try await withServices([writer]) { () async throws in
            store.freeze()
            let first = Task { try await writer.save(Self.checkpoint("j0", bytes: 1), id: "j0") }
            // A wait for a state, not a bound on time: in the full parallel pass this test takes
            // 9-12 s (0.1 s alone), and the commit reached the store after more than 5 s twice.
            #expect(await waitUntil(.seconds(30)) { store.waiting == 1 })
            let others = (1...16).map { index in
                Task { try await writer.save(Self.checkpoint("j\(index)", bytes: Int64(index) * 100), id: "j\(index)") }
            }
            #expect(await waitUntil(.seconds(5)) { writer.waiting == 16 })
            // Queued behind the commit under way, none of them written yet.
            #expect(store.calls["saveCheckpoints"] == nil)
            store.thaw()
            try await first.value
            for task in others { try await task.value }
            #expect(store.calls["saveCheckpoints"] == 2)
            #expect(writer.commits == 2)
            for index in 1...16 { #expect(try await store.checkpoint(id: "j\(index)")?.writtenBytes == Int64(index) * 100) }
        }
    }

    /// A save with no commit under way starts one at once, and a save from a cancelled task
    /// (a pause's last checkpoint) is written like any other.
    @Test func aLoneSaveCommitsAtOnceEvenFromACancelledTask() async throws {
        let store = try await Self.store(jobs: 1)
        let writer = CheckpointWriter(repository: store)
        try await withServices([writer]) { () async throws in
            try await writer.save(Self.checkpoint("j0", bytes: 10), id: "j0")
            #expect(try await store.checkpoint(id: "j0")?.writtenBytes == 10)
            let cancelled = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await writer.save(Self.checkpoint("j0", bytes: 20), id: "j0")
            }
            try await cancelled.value
            #expect(try await store.checkpoint(id: "j0")?.writtenBytes == 20)
            try await writer.save(nil, id: "j0")
            #expect(try await store.checkpoint(id: "j0") == nil)
            #expect(writer.commits == 3)
        }
    }

    /// The writer is a service (issue 37, point 2): a save waits for it to run, and once it
    /// has stopped, a save fails at once rather than wait for ever.
    @Test func savesAreCommittedByTheRunningServiceAndRefusedOnceItStopped() async throws {
        let store = try await Self.store(jobs: 1)
        let writer = CheckpointWriter(repository: store)
        let early = Task { try await writer.save(Self.checkpoint("j0", bytes: 5), id: "j0") }
        #expect(await waitUntil(.seconds(30)) { writer.waiting == 1 })
        #expect(store.calls["saveCheckpoints"] == nil, "nothing is written while the service does not run")
        try await withServices([writer]) { try await early.value }
        #expect(try await store.checkpoint(id: "j0")?.writtenBytes == 5)
        await #expect(throws: SluiceError.self) { try await writer.save(Self.checkpoint("j0", bytes: 9), id: "j0") }
        #expect(try await store.checkpoint(id: "j0")?.writtenBytes == 5)
    }

    /// A writer cancelled rather than shut down gracefully still commits the saves it took
    /// (they failed: a store call in the cancelled task refuses to start).
    @Test func aCancelledWriterStillCommitsTheSavesItTook() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteJobRepository(path: directory.path + "/sluice.sqlite")
            try await store.insert(
                JobSnapshot(id: "j0", url: "https://example.com/j0", state: .running, connections: 1, priority: 0, createdAt: Date()))
            let writer = CheckpointWriter(repository: store)
            let save = Task { try await writer.save(Self.checkpoint("j0", bytes: 7), id: "j0") }
            #expect(await waitUntil(.seconds(30)) { writer.waiting == 1 })
            let cancelled = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                await writer.run()
            }
            await cancelled.value
            try await save.value
            #expect(try await store.checkpoint(id: "j0")?.writtenBytes == 7)
        }
    }
}
