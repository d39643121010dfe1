import Crypto
import DownloadEngine
import Foundation
import HTTPTypes
import SluiceCore
import SluiceTestSupport
import Testing

/// RFC 9530 on the downloader's side: every request asks for `Repr-Digest`, and a finished
/// file whose SHA-256 is not the one the remote announced fails with `checksum_mismatch`
/// and stays out of the destination. One test at a time: the scripted origin generates its
/// file byte by byte on the cooperative pool, and seven at once starved every other test.
@Suite(.serialized) struct ReprDigestDownloadTests {
    static let reprDigest = HTTPField.Name("Repr-Digest")!
    static let wantReprDigest = HTTPField.Name("Want-Repr-Digest")!

    /// The fields of the two versions, computed once: a scripted origin asks for them on
    /// every answer, and hashing the file in each (on the origin's event loop) stalled every
    /// download in the process.
    static let fields = (0...1).map { version in
        let content = HostileRemoteTests.content(version: version, 0..<HostileRemoteTests.size)
        return "sha-256=:" + Data(SHA256.hash(data: content)).base64EncodedString() + ":"
    }

    static func field(version: Int) -> String { fields[version] }

    @Test(arguments: ["/testdata/3M?seed=4&digest=1", "/testdata/3M?seed=4&norange=1&digest=1", "/testdata/3M?seed=4&nolength=1&digest=1"])
    func aDownloadWithTheRightDigestCompletes(path: String) async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let expected = EngineHarness.expectedSHA256(size: 3 << 20, seed: 4)
            try await harness.warmDigest(path)
            let result = try await harness.download(path).run()
            #expect(result.sha256 == expected)
            #expect(try harness.documentNames().count == 1)
            // The digest was taken from the probe: the placement intent's checkpoint holds it.
            let intent = try #require(try await harness.checkpoints().load())
            #expect(intent.announcedSHA256 == expected)
        }
    }

    @Test(arguments: ["/testdata/2M?baddigest=1", "/testdata/2M?baddigest=1&norange=1", "/testdata/2M?baddigest=1&nolength=1"])
    func aWrongDigestFailsWithChecksumMismatch(path: String) async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            try await harness.warmDigest(path)
            let error = await #expect(throws: SluiceError.self) {
                try await harness.download(path).run()
            }
            #expect(error?.code == .checksumMismatch)
            #expect(error?.message.contains("Repr-Digest") == true)
            #expect(try harness.documentNames().isEmpty)
        }
    }

    @Test(arguments: [
        "sha-256=:not base64!:", "sha-256=:AAAA:", "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", "sha-256",
        "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, ,", "md5=:AAAAAAAAAAAAAAAAAAAAAA==:", "\u{7F}\u{1}",
    ])
    func aMalformedDigestIsIgnored(value: String) async throws {
        let log = HostileRemoteTests.Log()
        let script = HostileRemoteTests.Script(
            version: { _ in 0 },
            validators: { _ in [.eTag: "\"v0\"", Self.reprDigest: value] }
        )
        try await withTemporaryDirectory { directory in
            try await HostileRemoteTests.withScriptedOrigin(script, log: log) { port in
                let result = try await HostileRemoteTests.download("http://127.0.0.1:\(port)/file", in: directory)
                #expect(result.sha256 == HostileRemoteTests.sha256(version: 0))
            }
        }
    }

    /// The remote changes under the download (a new ETag and new bytes): the download starts
    /// over, and the digest it checks is the new probe's, not the first one's.
    @Test func aChangedRemoteBringsItsOwnDigest() async throws {
        let log = HostileRemoteTests.Log()
        let script = HostileRemoteTests.Script(
            version: { $0 == 0 ? 0 : 1 },
            validators: { number in
                number == 0
                    ? [.eTag: "\"v0\"", Self.reprDigest: Self.field(version: 0)]
                    : [.eTag: "\"v1\"", Self.reprDigest: Self.field(version: 1)]
            }
        )
        try await withTemporaryDirectory { directory in
            try await HostileRemoteTests.withScriptedOrigin(script, log: log) { port in
                let result = try await HostileRemoteTests.download("http://127.0.0.1:\(port)/file", in: directory)
                #expect(result.sha256 == HostileRemoteTests.sha256(version: 1))
                // The probe, the segments and the second probe all asked for the digest.
                #expect(log.all.count > 2)
                #expect(log.all.allSatisfy { $0[Self.wantReprDigest] == "sha-256=9" })
            }
        }
    }

    /// A resume from a checkpoint sends no probe: the digest it checks is the one the
    /// checkpoint kept from the first run's probe.
    @Test(arguments: [true, false])
    func aResumeChecksTheDigestItsCheckpointKept(rightDigest: Bool) async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let total: Int64 = 2 << 20
            let expected = EngineHarness.expectedSHA256(size: total)
            _ = try harness.directory.write("cache/job.part", TestDataContent().bytes(0..<(1 << 20)))
            try await harness.checkpoints().save(
                DownloadCheckpoint(
                    url: harness.url("/testdata/2M"), validators: Validators(etag: EntityTag("td-2097152-0")),
                    totalBytes: total, acceptsRanges: true, written: [0..<(1 << 20)], fileName: "2M",
                    announcedSHA256: rightDigest ? expected : String(repeating: "0", count: 64)
                )
            )
            if rightDigest {
                let result = try await harness.download("/testdata/2M").run()
                #expect(result.sha256 == expected)
            } else {
                let error = await #expect(throws: SluiceError.self) {
                    try await harness.download("/testdata/2M").run()
                }
                #expect(error?.code == .checksumMismatch)
                #expect(try harness.documentNames().isEmpty)
            }
        }
    }
}
