import Foundation
import SluiceTestSupport
import Testing

@testable import SluiceCore

/// CONTRACT.md §8, `checksum` and `checksumUrl`: the four algorithms, and checksum files in
/// the layouts projects publish, as the real tools write them.
@Suite struct ChecksumFileTests {
    static let sha256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"

    @Test func aChecksumIsAlgoEqualsHexInAria2sSpelling() throws {
        let parsed = try Checksum(parsing: "SHA-256=\(Self.sha256.uppercased())")
        #expect(parsed.algorithm == .sha256 && parsed.hex == Self.sha256 && parsed.description == "sha-256=\(Self.sha256)")
        #expect(try Checksum(parsing: "md5=b1946ac92492d2347c6235b4d2611184").algorithm == .md5)
        for (bad, words) in [
            ("sha256=\(Self.sha256)", "ALGO one of sha-256, sha-512, sha-1, md5"), ("sha-256", "ALGO=HEX"),
            ("sha-1=\(Self.sha256)", "40 hexadecimal digits"), ("md5=b1946ac92492d2347c6235b4d261118g", "32 hexadecimal"),
            ("sha-512=", "128 hexadecimal"),
        ] {
            let error = try #require(throws: SluiceError.self) { try Checksum(parsing: bad) }
            #expect(error.code == .invalidField && error.field == "checksum" && error.message.contains(words), "\(bad): \(error)")
        }
    }

    /// Lines as each layout writes them, and what is read from them for the file `f.iso`.
    @Test(arguments: [
        ("\(sha256)  f.iso\n", Checksum.Algorithm.sha256),
        ("\(sha256) *f.iso\r\n", .sha256),
        ("\(sha256) f.iso", .sha256),
        ("SHA256 (f.iso) = \(sha256)\n", .sha256),
        ("SHA256(f.iso)= \(sha256)\n", .sha256),
        ("SHA2-256(f.iso)= \(sha256)\n", .sha256),
        ("\(sha256)\n", .sha256),
        ("# Fedora-Server-41.iso: 2 bytes\nSHA256 (other.iso) = \(String(repeating: "0", count: 64))\n\(sha256)  ./f.iso\n", .sha256),
        ("\(sha256)  images/f.iso\n", .sha256),
        ("MD5 (f.iso) = b1946ac92492d2347c6235b4d2611184\nSHA256 (f.iso) = \(sha256)\n", .sha256),
    ])
    func eachLayoutIsRead(text: String, algorithm: Checksum.Algorithm) throws {
        let file = try ChecksumFile(parsing: Array(text.utf8))
        let digest = try file.checksum(for: "f.iso")
        #expect(digest.algorithm == algorithm)
        #expect(digest.hex == Self.sha256, "\(text)")
    }

    @Test func aNameGNUEscapesIsUnescapedAndANameWithParenthesesIsKept() throws {
        let file = try ChecksumFile(parsing: Array("\\\(Self.sha256)  a\\nb\\\\c.iso\nSHA256 (x (1).iso) = \(Self.sha256)\n".utf8))
        #expect(file.entries.map(\.name) == ["a\nb\\c.iso", "x (1).iso"])
    }

    @Test func whatNamesNoDigestIsUnavailable() throws {
        for (text, words) in [
            ("\(Self.sha256)  other.iso\n", "no entry for f.iso (1 entries)"),
            ("\(Self.sha256)  f.iso\n\(String(repeating: "a", count: 64))  f.iso\n", "2 different digests for f.iso"),
            ("<html>Not Found</html>\n", "no checksum in a known layout"),
            ("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n\(Self.sha256)  f.iso\n", "cut short"),
            ("\(Self.sha256)  f.iso\0\n", "not text"),
        ] {
            let error = try #require(throws: SluiceError.self) {
                try ChecksumFile(parsing: Array(text.utf8)).checksum(for: "f.iso")
            }
            #expect(error.code == .checksumUnavailable && error.message.contains(words), "\(error)")
        }
        let large = [UInt8](repeating: 0x61, count: ChecksumFile.maximumBytes + 1)
        #expect(throws: SluiceError.self) { try ChecksumFile(parsing: large) }
    }

    /// The files themselves, made by the tools users publish them with: coreutils (GNU and
    /// `--tag`), OpenSSL 3, and `gpg --clearsign` around Debian's layout (dash-escaping
    /// included: a line that starts with a dash).
    @Test func filesTheRealToolsWriteAreRead() async throws {
        try await withTemporaryDirectory { directory in
            let data = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try data.write(to: URL(fileURLWithPath: directory.path + "/f.iso"))
            try data.write(to: URL(fileURLWithPath: directory.path + "/-dash.iso"))
            var expected: [Checksum.Algorithm: String] = [:]
            for (tool, algorithm) in [
                ("sha256sum", Checksum.Algorithm.sha256), ("sha512sum", .sha512), ("sha1sum", .sha1), ("md5sum", .md5),
            ] {
                let plain = try Self.run(directory.path, "\(tool) f.iso")
                expected[algorithm] = String(plain.prefix(algorithm.hexLength))
                for text in [plain, try Self.run(directory.path, "\(tool) --tag f.iso"), try Self.run(directory.path, "\(tool) -b f.iso")] {
                    let digest = try ChecksumFile(parsing: Array(text.utf8)).checksum(for: "f.iso")
                    #expect(digest == Checksum(algorithm, hex: expected[algorithm]!), "\(tool): \(text)")
                }
            }
            for (flag, algorithm) in [("-sha256", Checksum.Algorithm.sha256), ("-sha512", .sha512), ("-sha1", .sha1), ("-md5", .md5)] {
                let text = try Self.run(directory.path, "openssl dgst \(flag) f.iso")
                #expect(
                    try ChecksumFile(parsing: Array(text.utf8)).checksum(for: "f.iso") == Checksum(algorithm, hex: expected[algorithm]!),
                    "\(text)")
            }
            // Signed as Debian signs SHA256SUMS (a throwaway key in a home of its own).
            let signed = try Self.run(
                directory.path,
                """
                export GNUPGHOME="$PWD/gnupg"; mkdir -m 700 gnupg
                gpg --batch --quiet --pinentry-mode loopback --passphrase '' --quick-gen-key 'Sluice Test <test@example.invalid>' ed25519 sign 1d 2>/dev/null
                sha256sum f.iso ./-dash.iso > SHA256SUMS && sed -i 's#  ./-dash.iso#  -dash.iso#' SHA256SUMS
                printf -- '-- a line that starts with a dash\\n' >> SHA256SUMS
                gpg --batch --quiet --clearsign --output - SHA256SUMS 2>/dev/null
                """)
            #expect(signed.contains("- -- a line that starts with a dash"), "gpg dash-escapes: \(signed)")
            let file = try ChecksumFile(parsing: Array(signed.utf8))
            #expect(file.clearSigned)
            #expect(try file.checksum(for: "f.iso") == Checksum(.sha256, hex: expected[.sha256]!))
            #expect(try file.checksum(for: "-dash.iso") == Checksum(.sha256, hex: expected[.sha256]!))
        }
    }

    static func run(_ directory: String, _ script: String) throws -> String {
        let (status, out, err) = try Spawned.run("/bin/bash", ["-c", "set -euo pipefail; cd \"$1\"; \(script)", "bash", directory])
        guard status == 0 else { throw SluiceError(.io, "\(script): \(String(decoding: err, as: UTF8.self))") }
        return String(decoding: out, as: UTF8.self)
    }
}
