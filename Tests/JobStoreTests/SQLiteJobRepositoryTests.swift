#if canImport(Glibc)
import Glibc
#endif
import JobService
import Foundation
import JobStore
import SluiceCore
import SluiceTestSupport
import Testing

@Suite struct SQLiteJobRepositoryTests {
    static func job(_ id: String, state: JobState = .queued) -> JobSnapshot {
        var job = JobSnapshot(
            id: id, url: "https://example.com/\(id).iso", state: state, connections: 4, priority: 2,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000), requestedFilename: "\(id).iso",
            expectedDigest: String(repeating: "a", count: 64), headers: ["Cookie": "a=b"]
        )
        job.bytesTotal = 1000
        return job
    }

    @Test func jobsSurviveReopeningTheFile() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path + "/jobs.sqlite"
            do {
                let repository = try SQLiteJobRepository(path: path)
                try await repository.insert(Self.job("a"))
                try await repository.insert(Self.job("b"))
                var failed = Self.job("b", state: .failed)
                failed.error = .init(code: "network", message: "reset")
                try await repository.update(failed)
                try await repository.insert(Self.job("c"))
                try await repository.delete(id: "c")
            }
            let reopened = try SQLiteJobRepository(path: path)
            let jobs = try await reopened.allJobs()
            #expect(jobs.map(\.id) == ["a", "b"])
            #expect(jobs[0] == Self.job("a"))
            #expect(jobs[1].state == .failed)
            #expect(jobs[1].error == .init(code: "network", message: "reset"))
            #expect(jobs[1].headers == ["Cookie": "a=b"])
        }
    }

    @Test func checkpointsRoundTripAndCarryTheBytesOnDisk() async throws {
        try await withTemporaryDirectory { directory in
            let repository = try SQLiteJobRepository(path: directory.path + "/jobs.sqlite")
            try await repository.insert(Self.job("a"))
            let store = JobCheckpointStore(repository: repository, id: "a")
            #expect(try await store.load() == nil)
            let checkpoint = DownloadCheckpoint(
                url: "https://example.com/a.iso", validators: Validators(etag: EntityTag("x"), lastModified: 5),
                totalBytes: 1000, acceptsRanges: true, written: [0..<100, 500..<700], fileName: "a.iso"
            )
            try await store.save(checkpoint)
            #expect(try await store.load() == checkpoint)
            #expect(try await repository.allJobs()[0].bytesDone == 300)
            try await store.remove()
            #expect(try await store.load() == nil)
        }
    }

    /// The placement intent stays until the job is saved `completed`, and goes in that same
    /// write: a crash at any moment leaves either the intent or the completed job.
    @Test func savingCompletedClearsThePlacementIntentInTheSameWrite() async throws {
        try await withTemporaryDirectory { directory in
            let repository = try SQLiteJobRepository(path: directory.path + "/jobs.sqlite")
            try await repository.insert(Self.job("a", state: .running))
            var intent = DownloadCheckpoint(url: "https://example.com/a.iso", totalBytes: 1000, acceptsRanges: true, written: [0..<1000])
            intent.placement = .init(device: 1, inode: 2, size: 1000, sha256: "ab", fileName: "a.iso")
            try await repository.saveCheckpoint(intent, id: "a")
            try await repository.update(Self.job("a", state: .running))
            #expect(try await repository.checkpoint(id: "a")?.placement != nil)
            try await repository.update(Self.job("a", state: .completed))
            #expect(try await repository.checkpoint(id: "a") == nil)
        }
    }

    /// A full disk: the store gives up its reserve file and writes on, so a state change
    /// (a job failing because downloads filled the disk) is not lost.
    @Test(.enabled(if: SmallFileSystem.available, "mounting a tmpfs is not permitted here"))
    func aFullDiskUsesTheReserveBeforeRefusing() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/small"
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            #expect(SmallFileSystem.mount(data, megabytes: 16))
            defer { SmallFileSystem.unmount(data) }
            let path = data + "/jobs.sqlite"
            let repository = try SQLiteJobRepository(path: path)
            #expect(FileManager.default.fileExists(atPath: path + "-reserve"))
            let chunk = [UInt8](repeating: 7, count: 64 << 10)
            let fd = open(data + "/filler", O_WRONLY | O_CREAT, 0o600)
            while write(fd, chunk, chunk.count) > 0 {}
            while write(fd, chunk, 512) > 0 {}
            close(fd)
            var written = 0
            var refusal: SluiceError?
            for index in 0..<2000 {
                var job = Self.job("j\(index)")
                job.url = "https://example.com/" + String(repeating: "u", count: 8000)
                do {
                    try await repository.insert(job)
                    written += 1
                } catch let error as SluiceError {
                    refusal = error
                    break
                }
            }
            // The reserve went first, then the store refused with no_space, not a crash.
            #expect(!FileManager.default.fileExists(atPath: path + "-reserve"))
            #expect(written > 100, "only \(written) writes after the disk filled")
            #expect(refusal?.code == .noSpace)
        }
    }

    @Test func usesWriteAheadLogging() async throws {
        try await withTemporaryDirectory { directory in
            let repository = try SQLiteJobRepository(path: directory.path + "/jobs.sqlite")
            try await repository.insert(Self.job("a"))
            withExtendedLifetime(repository) {
                #expect(FileManager.default.fileExists(atPath: directory.path + "/jobs.sqlite-wal"))
            }
        }
    }
}
