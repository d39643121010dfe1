import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// A download of a job that never ran (`DownloadOptions.neverRun`) has no checkpoint: its run
/// neither reads nor removes one before its first byte (issue 37: a create is one write), and
/// still stores and hands back the ones it makes.
@Suite struct NeverRunTests {
    /// A checkpoint store that counts what it is asked.
    final class CountingStore: CheckpointStore {
        let calls = Mutex<[String: Int]>([:])
        let inner: JSONFileCheckpointStore
        init(path: String) { inner = JSONFileCheckpointStore(path: path) }

        func load() async throws -> DownloadCheckpoint? {
            calls.withLock { $0["load", default: 0] += 1 }
            return try await inner.load()
        }
        func save(_ checkpoint: DownloadCheckpoint) async throws {
            calls.withLock { $0["save", default: 0] += 1 }
            try await inner.save(checkpoint)
        }
        func remove() async throws {
            calls.withLock { $0["remove", default: 0] += 1 }
            try await inner.remove()
        }
    }

    @Test func aRunThatNeverRanTouchesNoCheckpointBeforeItsBytesAndHandsBackItsLast() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let store = CountingStore(path: harness.cache + "/new.json")
            var options = DownloadOptions(connections: 2, retry: EngineHarness.quickRetry, progressInterval: 0.05)
            options.neverRun = true
            let download = Download(
                url: harness.url("/testdata/4M?rate=2M&seed=3"),
                target: DownloadTarget(partialPath: harness.cache + "/new.part", destination: .directory(harness.documents), fileName: nil),
                options: options, client: harness.client, checkpoints: store
            )
            let run = Task { try await download.run() }
            var firstBytes = false
            for await case .progress(let progress) in download.events where progress.bytesDone > 0 {
                firstBytes = true
                break
            }
            #expect(firstBytes)
            #expect(store.calls.withLock { $0["load"] ?? 0 } == 0, "nothing to read")
            #expect(store.calls.withLock { $0["remove"] ?? 0 } == 0, "nothing to remove")
            run.cancel()
            _ = await run.result
            // Stopped: its last checkpoint is stored, and handed back.
            #expect(store.calls.withLock { $0["save"] ?? 0 } >= 1)
            let stored = try #require(try await store.inner.load())
            #expect(download.checkpointedBytes == stored.writtenBytes)
        }
    }
}
