import Crypto
import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// `signatureUrl` (CONTRACT.md §8) with keys and signatures the real tools made: gpg's
/// detached signatures checked through gpgv, minisign's in process; of the checksum file
/// before the file's first byte, or of the file before it is placed.
@Suite(.enabled(if: SigningFixtures.unavailable == nil, "\(SigningFixtures.unavailable ?? "")"))
struct SignatureDownloadTests {
    static let content = Data(TestDataContent(seed: 21).bytes(0..<(512 << 10)))
    static var sha256: String { FileDigest.hex(SHA256.hash(data: content)) }

    /// The origin's `/files/` holds `image.iso` and `SHA256SUMS` for it; `keys` the trusted
    /// keys of `trusted` (a gpg key and a minisign key); `stranger` another pair, untrusted.
    struct Fixture: Sendable {
        let harness: EngineHarness
        let recorder: RequestRecorder
        let origin: String
        let gpg: SigningFixtures.GPGKey
        let stranger: SigningFixtures.GPGKey
        let minisign: SigningFixtures.MinisignKey
        let strangerMinisign: SigningFixtures.MinisignKey
        let keys: TrustedKeys

        func sources(checksum: Bool = true, signature: String) -> IntegritySources {
            IntegritySources(
                checksumURL: checksum ? harness.url("/files/SHA256SUMS") : nil, signatureURL: harness.url("/files/" + signature), keys: keys
            )
        }

        func run(_ sources: IntegritySources, name: String = "job") async throws -> (DownloadResult, IntegrityFinding?) {
            let found = Mutex<IntegrityFinding?>(nil)
            let result = try await harness.download(
                "/files/image.iso", name: name, integrity: sources,
                progress: { progress in if let integrity = progress.integrity { found.withLock { $0 = integrity } } }
            ).run()
            return (result, found.withLock { $0 })
        }

        func failure(_ sources: IntegritySources, name: String = "job") async -> SluiceError? {
            await #expect(throws: SluiceError.self) { _ = try await run(sources, name: name) }
        }
    }

    static func withFixture(_ body: @Sendable (Fixture) async throws -> Void) async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            let origin = harness.directory.path + "/origin"
            let keysDirectory = harness.directory.path + "/keys"
            try FileManager.default.createDirectory(atPath: keysDirectory, withIntermediateDirectories: true)
            try content.write(to: URL(fileURLWithPath: origin + "/image.iso"))
            try Data("\(sha256)  image.iso\n".utf8).write(to: URL(fileURLWithPath: origin + "/SHA256SUMS"))
            let gpg = try SigningFixtures.GPGKey(in: harness.directory.path, name: "archive")
            let stranger = try SigningFixtures.GPGKey(in: harness.directory.path, name: "stranger")
            defer {
                gpg.stopAgent()
                stranger.stopAgent()
            }
            try gpg.export(to: keysDirectory + "/archive.asc", armored: true)
            let minisign = try SigningFixtures.MinisignKey(in: harness.directory.path, name: "release")
            let strangerMinisign = try SigningFixtures.MinisignKey(in: harness.directory.path, name: "other")
            try FileManager.default.copyItem(atPath: minisign.publicKey, toPath: keysDirectory + "/release.pub")
            let keys = try TrustedKeys.load(directory: keysDirectory, keyringPath: harness.directory.path + "/trusted.gpg")
            try await body(
                Fixture(
                    harness: harness, recorder: recorder, origin: origin, gpg: gpg, stranger: stranger, minisign: minisign,
                    strangerMinisign: strangerMinisign, keys: keys))
        }
    }

    @Test func aChecksumFileSignedByATrustedKeyGivesTheDigestAndNamesTheKey() async throws {
        try await Self.withFixture { fixture in
            try fixture.gpg.sign(fixture.origin + "/SHA256SUMS", to: fixture.origin + "/SHA256SUMS.gpg", armored: false)
            try fixture.gpg.sign(fixture.origin + "/SHA256SUMS", to: fixture.origin + "/SHA256SUMS.asc", armored: true)
            try fixture.minisign.sign(fixture.origin + "/SHA256SUMS", to: fixture.origin + "/SHA256SUMS.minisig")
            for (index, (signature, format, key)) in [
                ("SHA256SUMS.gpg", SignatureCheck.Format.openpgp, fixture.gpg.fingerprint),
                ("SHA256SUMS.asc", .openpgp, fixture.gpg.fingerprint), ("SHA256SUMS.minisig", .minisign, fixture.minisign.keyID),
            ].enumerated() {
                let (result, finding) = try await fixture.run(fixture.sources(signature: signature), name: "job\(index)")
                #expect(result.sha256 == Self.sha256)
                #expect(finding?.signature == SignatureCheck(format: format, key: key, verified: true), "\(signature)")
                #expect(finding?.expected?.hex == Self.sha256 && finding?.source == "checksumUrl")
            }
        }
    }

    @Test func aSignatureNoTrustedKeyVerifiesFailsBeforeTheFilesFirstByte() async throws {
        try await Self.withFixture { fixture in
            // By keys the service does not trust.
            try fixture.stranger.sign(fixture.origin + "/SHA256SUMS", to: fixture.origin + "/stranger.asc", armored: true)
            try fixture.strangerMinisign.sign(fixture.origin + "/SHA256SUMS", to: fixture.origin + "/stranger.minisig")
            // By the trusted keys, of another checksum file than the one served.
            try Data("\(String(repeating: "0", count: 64))  image.iso\n".utf8).write(
                to: URL(fileURLWithPath: fixture.origin + "/OTHER"))
            try fixture.gpg.sign(fixture.origin + "/OTHER", to: fixture.origin + "/other.asc", armored: true)
            try fixture.minisign.sign(fixture.origin + "/OTHER", to: fixture.origin + "/other.minisig")
            try Data("not a signature\n".utf8).write(to: URL(fileURLWithPath: fixture.origin + "/garbage.sig"))
            // A document the trusted key signed, not a detached signature: gpgv would verify
            // its own text (armored clear-signed, and binary inline-signed), not the file.
            try fixture.gpg.clearSign(fixture.origin + "/OTHER", to: fixture.origin + "/clearsigned.asc")
            try fixture.gpg.inlineSign(fixture.origin + "/OTHER", to: fixture.origin + "/inline.gpg")
            for (signature, format) in [
                ("stranger.asc", "openpgp"), ("stranger.minisig", "minisign"), ("other.asc", "openpgp"), ("other.minisig", "minisign"),
                ("garbage.sig", "openpgp"), ("clearsigned.asc", "openpgp"), ("inline.gpg", "openpgp"),
            ] {
                let error = await fixture.failure(fixture.sources(signature: signature))
                #expect(error?.code == .signatureInvalid, "\(signature)")
                #expect(error?.message == "no trusted key verifies the checksum file's \(format) signature", "\(signature)")
            }
            #expect(!fixture.recorder.all.contains { $0.path == "/files/image.iso" }, "nothing of the file fetched")
            #expect(try fixture.harness.documentNames().isEmpty)
            // One that cannot be fetched.
            let missing = await fixture.failure(fixture.sources(signature: "absent.asc"))
            #expect(missing?.code == .signatureUnavailable)
        }
    }

    @Test func theFilesOwnSignatureIsCheckedBeforeItIsPlaced() async throws {
        try await Self.withFixture { fixture in
            try fixture.minisign.sign(fixture.origin + "/image.iso", to: fixture.origin + "/image.iso.minisig")
            try fixture.minisign.sign(fixture.origin + "/image.iso", to: fixture.origin + "/legacy.minisig", legacy: true)
            try fixture.gpg.sign(fixture.origin + "/image.iso", to: fixture.origin + "/image.iso.sig", armored: false)
            for (index, (signature, key)) in [
                ("image.iso.minisig", fixture.minisign.keyID), ("legacy.minisig", fixture.minisign.keyID),
                ("image.iso.sig", fixture.gpg.fingerprint),
            ].enumerated() {
                let (result, finding) = try await fixture.run(fixture.sources(checksum: false, signature: signature), name: "own\(index)")
                #expect(result.sha256 == Self.sha256)
                #expect(finding?.signature?.key == key && finding?.signature?.verified == true, "\(signature)")
            }
            // A signature of other bytes: the file is fetched, checked, and not placed.
            try Data("other bytes".utf8).write(to: URL(fileURLWithPath: fixture.origin + "/other.bin"))
            try fixture.minisign.sign(fixture.origin + "/other.bin", to: fixture.origin + "/other.minisig")
            let placed = try fixture.harness.documentNames()
            let error = await fixture.failure(fixture.sources(checksum: false, signature: "other.minisig"), name: "wrong")
            #expect(error?.code == .signatureInvalid && error?.message == "no trusted key verifies the file's minisign signature")
            #expect(try fixture.harness.documentNames() == placed, "nothing more placed")
        }
    }
}
