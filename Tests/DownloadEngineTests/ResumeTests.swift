import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

@Suite struct ResumeTests {
    /// Issue 21, by reading: the partial file was opened following a symbolic link, so one
    /// planted in the cache directory made a download write wherever it pointed. It is not
    /// followed: the download fails, and the file it points to is untouched.
    @Test func aSymbolicLinkAsThePartialFileIsNotFollowed() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let elsewhere = harness.directory.path + "/elsewhere"
            try Data("keep".utf8).write(to: URL(fileURLWithPath: elsewhere))
            try FileManager.default.createSymbolicLink(atPath: harness.cache + "/job.part", withDestinationPath: elsewhere)
            do {
                _ = try await harness.download("/testdata/64K", name: "job").run()
                Issue.record("the download wrote through the link")
            } catch let error as SluiceError {
                #expect(error.code == .io, "\(error)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: elsewhere)) == Data("keep".utf8))
        }
    }

    @Test func pauseByCancellationThenResumeKeepsTheBytes() async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            let path = "/testdata/4M?rate=2M&seed=6"
            let seen = Mutex<Int64>(0)
            let task = Task {
                try await harness.download(
                    path, connections: 2,
                    progress: { progress in
                        seen.withLock { $0 = max($0, progress.bytesDone) }
                    }
                ).run()
            }
            // Poll with a deadline until some bytes are on disk, then pause.
            let deadline = ContinuousClock.now + .seconds(20)
            while seen.withLock({ $0 }) < 1 << 20, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let checkpoint = try #require(try await harness.checkpoints().load())
            let before = seen.withLock { $0 }
            #expect(checkpoint.writtenBytes >= before)
            #expect(checkpoint.writtenBytes < 4 << 20)
            #expect(checkpoint.validators?.etag == EntityTag("td-4194304-6"))

            let requestsBeforeResume = recorder.all.count
            let result = try await harness.download(path, connections: 2).run()
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: 4 << 20, seed: 6))
            // The resume asked only for what the checkpoint did not have, under If-Range.
            let resumed = recorder.all.dropFirst(requestsBeforeResume)
            #expect(!resumed.isEmpty)
            #expect(resumed.allSatisfy { $0.status == 206 && $0.ifRange == "\"td-4194304-6\"" })
            let asked = resumed.compactMap { $0.requestedRange(total: 4 << 20) }
            #expect(avoids(asked, checkpoint.writtenRanges))
        }
    }

    @Test func aPreviousRunsPartialFileIsResumedFetchingOnlyTheGaps() async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            let total: Int64 = 8 << 20
            let content = TestDataContent(seed: 0)
            // A "previous run" left 0..<3 MiB and 5..<6 MiB on disk.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: try harness.directory.write("cache/job.part", [])))
            try handle.truncate(atOffset: UInt64(total))
            for range in [Int64(0)..<(3 << 20), (5 << 20)..<(6 << 20)] {
                try handle.seek(toOffset: UInt64(range.lowerBound))
                try handle.write(contentsOf: content.bytes(range))
            }
            try handle.close()
            try await harness.checkpoints().save(
                DownloadCheckpoint(
                    url: harness.url("/testdata/8M"), validators: Validators(etag: EntityTag("td-8388608-0")),
                    totalBytes: total, acceptsRanges: true, written: [0..<(3 << 20), (5 << 20)..<(6 << 20)], fileName: "8M"
                )
            )
            let result = try await harness.download("/testdata/8M", connections: 4).run()
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: total))
            #expect(recorder.all.allSatisfy { $0.status == 206 && $0.ifRange == "\"td-8388608-0\"" })
            // Only the gaps were asked for, and each gap byte at least once.
            let asked = recorder.all.compactMap { $0.requestedRange(total: total) }
            #expect(avoids(asked, [0..<(3 << 20), (5 << 20)..<(6 << 20)]))
            #expect(recorder.bytesSent() >= 4 << 20)
        }
    }

    @Test func aChangedRemoteFileAtResumeStartsOverWithTheNewContent() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let total: Int64 = 2 << 20
            // The partial data is seed 1 under ETag "one"; the server now has seed 2 under "two".
            try harness.directory.write("cache/job.part", TestDataContent(seed: 1).bytes(0..<(1 << 20)))
            try await harness.checkpoints().save(
                DownloadCheckpoint(
                    url: harness.url("/testdata/2M?seed=2&etag=two"), validators: Validators(etag: EntityTag("one")),
                    totalBytes: total, acceptsRanges: true, written: [0..<(1 << 20)]
                )
            )
            let result = try await harness.download("/testdata/2M?seed=2&etag=two").run()
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: total, seed: 2))
        }
    }

    @Test func aFileChangingMidDownloadNeverYieldsAMix() async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            // The probe sees version one; every later request sees version two.
            let result = try await harness.download("/changing/4M?after=1", connections: 4).run()
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: 4 << 20, seed: 2))
            #expect(recorder.all.contains { $0.status == 200 })
        }
    }

    @Test func aMissingPartialFileRestartsFromZero() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            try await harness.checkpoints().save(
                DownloadCheckpoint(
                    url: harness.url("/testdata/1M"), validators: Validators(etag: EntityTag("td-1048576-0")),
                    totalBytes: 1 << 20, acceptsRanges: true, written: [0..<(1 << 20)]
                )
            )
            let result = try await harness.download("/testdata/1M").run()
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: 1 << 20))
        }
    }
}

@Suite struct DiskFullEngineTests {
    @Test(.enabled(if: SmallFileSystem.available, "mounting a tmpfs is not permitted here"))
    func aWriteThatHitsAFullDiskKeepsWhatIsOnDiskAndItsCheckpoint() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let small = harness.directory.path + "/small"
            try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
            #expect(SmallFileSystem.mount(small, megabytes: 2))
            defer { SmallFileSystem.unmount(small) }
            let store = JSONFileCheckpointStore(path: harness.cache + "/full.json")
            let download = Download(
                url: harness.url("/testdata/4M"),
                target: DownloadTarget(partialPath: small + "/full.part", destination: .directory(harness.documents)),
                options: DownloadOptions(connections: 1, retry: EngineHarness.quickRetry, preallocate: false),
                client: harness.client, checkpoints: store
            )
            let error = await #expect(throws: SluiceError.self) { try await download.run() }
            #expect(error?.code == .noSpace)
            let checkpoint = try #require(try await store.load())
            #expect(checkpoint.writtenBytes > 0)
            #expect(checkpoint.writtenBytes <= 2 << 20)
        }
    }
}
