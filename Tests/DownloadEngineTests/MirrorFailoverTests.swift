import DownloadEngine
import Foundation
import Logging
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// Mirrors without a digest (CONTRACT.md §8): one source at a time, and a move to the next
/// starts the file over from byte 0, so no file is made of two servers' bytes unproven.
@Suite struct MirrorFailoverTests {
    func mirrored(_ harness: EngineHarness, _ paths: [String]) -> MirroredDownload {
        MirroredDownload(
            sources: paths.map(harness.url), checkpoints: harness.checkpoints(), neverRun: true, logger: Logger(label: "test")
        ) { url, handoff in
            var options = DownloadOptions(connections: 4, retry: EngineHarness.quickRetry, minimumSplit: 256 << 10)
            options.neverRun = handoff.neverRun
            options.agreeWith = handoff.agreement
            options.progressInterval = 0.05
            return Download(
                url: url, target: DownloadTarget(partialPath: harness.cache + "/job.part", destination: .directory(harness.documents)),
                options: options, client: harness.client, checkpoints: harness.checkpoints())
        }
    }

    @Test func aFailingPrimaryGivesWayToTheMirrorWhichStartsFromByteZero() async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            let sources = Mutex<[SourceState]>([])
            // The primary never gets past its 500,000th byte; the mirror serves another seed,
            // so a file made of both would show it.
            let download = mirrored(harness, ["/testdata/1M?norange=1&cut=500000", "/testdata/1M?seed=5"])
            let reader = Task {
                for await case .progress(let progress) in download.events {
                    if let listed = progress.sources { sources.withLock { $0 = listed } }
                }
            }
            let result = try await download.run()
            await reader.value
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: 1 << 20, seed: 5))
            // The mirror was asked from byte 0, not from where the primary stopped.
            let asked = recorder.all.filter { $0.path.hasPrefix("/testdata/1M?seed=5") }
            #expect(asked.first?.range == "bytes=0-", "\(asked.map(\.range))")
            #expect(recorder.all.contains { $0.path.hasPrefix("/testdata/1M?norange") && $0.bodyBytes > 0 }, "the primary sent some")
            let listed = sources.withLock { $0 }
            #expect(listed.map(\.state) == [.failed, .ok] && listed.map(\.failures) == [1, 0], "\(listed)")
            #expect(listed.last?.bytes == 1 << 20)
        }
    }

    @Test func aPauseOrAFailureOfTheJobsOwnIsNotTheSourcesFault() {
        #expect(!MirroredDownload.isSourceFailure(CancellationError()))
        #expect(!MirroredDownload.isSourceFailure(SluiceError(.noSpace, "full")))
        #expect(!MirroredDownload.isSourceFailure(SluiceError(.checksumMismatch, "wrong")))
        #expect(MirroredDownload.isSourceFailure(SluiceError(.httpStatus, "the server answered HTTP 404")))
        #expect(MirroredDownload.isSourceFailure(SluiceError(.network, "reset")))
    }

    @Test func everySourceFailingFailsWithTheLastOnesError() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let download = mirrored(harness, ["/testdata/1M?status=404", "/testdata/1M?status=410"])
            let error = await #expect(throws: SluiceError.self) { _ = try await download.run() }
            #expect(error?.code == .httpStatus && error?.message.contains("410") == true, "\(String(describing: error))")
        }
    }

    /// A mirror is used only when it agrees with what the first source said of the file
    /// (CONTRACT.md §8), on its length and on a digest header both announce: one that does
    /// not is `excluded`, and the next is tried.
    @Test func aMirrorThatDisagreesWithTheFirstSourceIsExcluded() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            // The primary answers (1 MiB, with its digest) and never gets past 500,000 bytes.
            let primary = "/testdata/1M?norange=1&cut=500000&digest=1"
            try await harness.warmDigest(primary)
            let download = mirrored(
                harness,
                [primary, "/testdata/2M", "/testdata/1M?seed=5&digest=1", "/testdata/1M?etag=same"])
            try await harness.warmDigest("/testdata/1M?seed=5&digest=1")
            let sources = Mutex<[SourceState]>([])
            let reader = Task {
                for await case .progress(let progress) in download.events {
                    if let listed = progress.sources { sources.withLock { $0 = listed } }
                }
            }
            let result = try await download.run()
            await reader.value
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: 1 << 20))
            let listed = sources.withLock { $0 }
            #expect(listed.map(\.state) == [.failed, .excluded, .excluded, .ok], "\(listed)")
        }
    }
}

@Suite struct SourceAgreementTests {
    static let digest = Checksum(.sha256, hex: String(repeating: "a", count: 64))!

    @Test func onlyWhatBothSayCanDisagree() {
        let agreement = SourceAgreement(length: 100, announced: Self.digest)
        let other = DigestHeaders.Announced(checksum: Checksum(.sha256, hex: String(repeating: "b", count: 64))!, header: "digest")
        let md5 = DigestHeaders.Announced(checksum: Checksum(.md5, hex: String(repeating: "c", count: 32))!, header: "content-md5")
        #expect(agreement.disagreement(length: 100, announced: []) == nil)
        #expect(agreement.disagreement(length: nil, announced: [md5]) == nil, "unknown, or another algorithm: no disagreement")
        #expect(agreement.disagreement(length: 101, announced: []) == "it serves 101 bytes, the first source 100")
        #expect(agreement.disagreement(length: 100, announced: [md5, other])?.contains("Digest announces another SHA-256") == true)
        #expect(SourceAgreement().disagreement(length: 5, announced: [other]) == nil)
    }
}
