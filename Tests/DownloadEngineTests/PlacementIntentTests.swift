#if canImport(Glibc)
import Glibc
#endif
import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 10: a `kill -9` between placing the file and saving `completed` must not lead to
/// a second download and a second copy.
@Suite struct PlacementIntentTests {
    static let total: Int64 = 1 << 20

    /// Leaves what a run that died just before `link` leaves: a whole partial file and a
    /// checkpoint with the placement intent.
    static func leaveARunThatDiedBeforePlacing(_ harness: EngineHarness) async throws {
        let partial = harness.cache + "/job.part"
        try Data(TestDataContent(seed: 0).bytes(0..<total)).write(to: URL(fileURLWithPath: partial))
        var info = stat()
        #expect(stat(partial, &info) == 0)
        let placement = DownloadCheckpoint.Placement(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: total,
            sha256: EngineHarness.expectedSHA256(size: total), fileName: "1M"
        )
        var checkpoint = DownloadCheckpoint(
            url: harness.url("/testdata/1M"), validators: Validators(etag: EntityTag("td-1048576-0")), totalBytes: total,
            acceptsRanges: true, written: [0..<total], fileName: "1M"
        )
        checkpoint.placement = placement
        try await harness.checkpoints().save(checkpoint)
    }

    /// Died after `link` (the partial file still there, or already unlinked).
    @Test(arguments: [false, true])
    func aPlacedFileIsFoundAndNothingIsFetched(partialRemoved: Bool) async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            // Another file already took the plain name before this one: ours is " (1)".
            try Data("other".utf8).write(to: URL(fileURLWithPath: harness.documents + "/1M (1)"))
            let partial = harness.cache + "/job.part"
            try Data(TestDataContent(seed: 0).bytes(0..<Self.total)).write(to: URL(fileURLWithPath: partial))
            var info = stat()
            #expect(stat(partial, &info) == 0)
            var checkpoint = DownloadCheckpoint(
                url: harness.url("/testdata/1M"), validators: Validators(etag: EntityTag("td-1048576-0")),
                totalBytes: Self.total, acceptsRanges: true, written: [0..<Self.total], fileName: "1M"
            )
            checkpoint.placement = .init(
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Self.total,
                sha256: EngineHarness.expectedSHA256(size: Self.total), fileName: "1M"
            )
            try await harness.checkpoints().save(checkpoint)
            try Data("taken".utf8).write(to: URL(fileURLWithPath: harness.documents + "/1M"))
            #expect(link(partial, harness.documents + "/1M (2)") == 0)
            if partialRemoved { #expect(unlink(partial) == 0) }

            let result = try await harness.download("/testdata/1M", connections: 4).run()
            #expect(result.path == harness.documents + "/1M (2)")
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: Self.total))
            #expect(recorder.all.isEmpty, "the placed file was downloaded again")
            #expect(!FileManager.default.fileExists(atPath: partial))
            let names = try FileManager.default.contentsOfDirectory(atPath: harness.documents).sorted()
            #expect(names == ["1M", "1M (1)", "1M (2)"])
            #expect(try await harness.checkpoints().load() == nil)
        }
    }

    @Test func anIntentWithoutAPlacementPlacesOnceWithoutFetching() async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            try await Self.leaveARunThatDiedBeforePlacing(harness)
            let result = try await harness.download("/testdata/1M", connections: 4).run()
            #expect(result.path == harness.documents + "/1M")
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: Self.total))
            #expect(recorder.bytesSent() == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: harness.documents) == ["1M"])
        }
    }
}
