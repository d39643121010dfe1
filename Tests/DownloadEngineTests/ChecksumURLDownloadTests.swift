import Crypto
import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// `checksumUrl` (CONTRACT.md §8): the digest comes from a checksum file read before the
/// file's first byte; without an entry for the file, nothing of it is fetched.
@Suite struct ChecksumURLDownloadTests {
    static let content = Data(TestDataContent(seed: 9).bytes(0..<(1 << 20)))
    static var sha256: String { FileDigest.hex(SHA256.hash(data: content)) }

    /// The origin's `/files/` holds `image.iso` and `files` (name → text).
    static func withFiles(
        _ files: [String: String], _ body: @Sendable (EngineHarness, RequestRecorder) async throws -> Void
    ) async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { harness in
            let origin = harness.directory.path + "/origin"
            try content.write(to: URL(fileURLWithPath: origin + "/image.iso"))
            for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: origin + "/" + name)) }
            try await body(harness, recorder)
        }
    }

    @Test func theEntryForTheFileIsTheDigestAndTheRunSaysWhereItCameFrom() async throws {
        let sums = "\(String(repeating: "1", count: 64))  other.iso\n\(Self.sha256) *image.iso\n"
        try await Self.withFiles(["SHA256SUMS": sums]) { (harness: EngineHarness, recorder: RequestRecorder) async throws in
            let found = Mutex<IntegrityFinding?>(nil)
            let result = try await harness.download(
                "/files/image.iso", integrity: IntegritySources(checksumURL: harness.url("/files/SHA256SUMS")),
                progress: { progress in if let integrity = progress.integrity { found.withLock { $0 = integrity } } }
            ).run()
            #expect(result.sha256 == Self.sha256)
            #expect(found.withLock { $0 } == IntegrityFinding(expected: Checksum(.sha256, hex: Self.sha256), source: "checksumUrl"))
            // The checksum file first, then the file.
            #expect(recorder.all.first?.path == "/files/SHA256SUMS")
        }
    }

    @Test func aWrongEntryFailsTheFileAndAnotherNameIsLookedUp() async throws {
        let sums =
            "SHA512 (image.iso) = \(String(repeating: "ab", count: 64))\nMD5 (release.bin) = \(FileDigest.hex(Insecure.MD5.hash(data: Self.content)))\n"
        try await Self.withFiles(["CHECKSUM": sums]) { (harness: EngineHarness, _: RequestRecorder) async throws in
            let wrong = await #expect(throws: SluiceError.self) {
                _ = try await harness.download(
                    "/files/image.iso", name: "wrong", integrity: IntegritySources(checksumURL: harness.url("/files/CHECKSUM"))
                ).run()
            }
            #expect(wrong?.code == .checksumMismatch)
            #expect(wrong?.message.hasPrefix("SHA-512 is ") == true)
            // `checksumName`: the file is listed under another name than the URL's.
            let result = try await harness.download(
                "/files/image.iso", name: "named",
                integrity: IntegritySources(checksumURL: harness.url("/files/CHECKSUM"), checksumName: "release.bin")
            ).run()
            #expect(result.sha256 == Self.sha256)
        }
    }

    @Test(arguments: [
        ("no entry", "/files/SUMS", "has no entry for image.iso"),
        ("missing", "/files/absent", "could not be fetched: HTTP 404"),
        ("not a checksum file", "/files/README", "no checksum in a known layout"),
        ("too large", "/testdata/5M", "is larger than 4194304 bytes"),
    ])
    func aChecksumFileWithoutTheEntryFailsBeforeTheFilesFirstByte(label: String, path: String, message: String) async throws {
        let files = ["SUMS": "\(Self.sha256)  other.iso\n", "README": "see the web site\n"]
        try await Self.withFiles(files) { (harness: EngineHarness, recorder: RequestRecorder) async throws in
            let error = await #expect(throws: SluiceError.self, "\(label)") {
                _ = try await harness.download("/files/image.iso", integrity: IntegritySources(checksumURL: harness.url(path))).run()
            }
            #expect(error?.code == .checksumUnavailable)
            let said = error?.message ?? ""
            #expect(said.contains(message), "\(said)")
            #expect(!recorder.all.contains { $0.path == "/files/image.iso" }, "nothing of the file fetched")
            #expect(try harness.documentNames().isEmpty)
        }
    }

    @Test func aGivenDigestIsNotReplacedByTheChecksumFile() async throws {
        try await Self.withFiles(["SUMS": "\(String(repeating: "2", count: 64))  image.iso\n"]) {
            (harness: EngineHarness, recorder: RequestRecorder) async throws in
            let result = try await harness.download(
                "/files/image.iso", checksum: Checksum(.sha256, hex: Self.sha256),
                integrity: IntegritySources(checksumURL: harness.url("/files/SUMS"))
            ).run()
            #expect(result.sha256 == Self.sha256)
            #expect(!recorder.all.contains { $0.path == "/files/SUMS" }, "a job given its digest reads no checksum file")
        }
    }
}
