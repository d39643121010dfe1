import Foundation
import Testing

@testable import SluiceCore

/// RFC 9530's fields for SHA-256, checked against literal strings (RFC 9530's examples and
/// RFC 4648's test vectors), never against our own formatter alone.
@Suite struct ReprDigestTests {
    /// SHA-256 of `{"hello": "world"}`, RFC 9530 §3's example.
    static let helloWorld = "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="
    /// SHA-256 of the empty string.
    static let emptyHex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    static func hex(_ bytes: [UInt8]?) -> String? {
        bytes.map { $0.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
    }

    @Test(arguments: [
        ("sha-256=9", true), ("sha-256=1", true), ("sha-256=10", true),
        ("sha-256=0", false), ("sha-256=11", false), ("sha-256=-1", false),
        // RFC 9530 §4's example: other algorithms and their preferences do not matter.
        ("sha-512=3, sha-256=10, unixsum=0", true), ("sha-512=3,sha-256=0", false),
        (" \tsha-256=5 \t", true), ("sha-512=3 ,\t sha-256=2", true), ("sha-256=5;q=1", true),
        // A key given twice keeps its last value.
        ("sha-256=5, sha-256=0", false), ("sha-256=0, sha-256=5", true),
        ("sha-512=10", false), ("", false), ("sha-256", false), ("sha-256=?1", false), ("sha-256=\"9\"", false),
        ("sha-256=9.0", false), ("sha-256=:AA==:", false),
        // Garbage anywhere in the field makes it no field at all.
        ("sha-256=9, ", false), ("sha-256=9,,md5=1", false), ("SHA-256=9", false), ("sha-256 = 9", false),
        ("sha-256=9 garbage", false), ("sha-256=1234567890123456", false), ("\u{7F}", false), ("sha-256=9;", false),
    ])
    func want(field: String, accepts: Bool) {
        #expect(ReprDigest.acceptsSHA256(want: field) == accepts, "\(field)")
    }

    @Test func reprDigestGivesTheSHA256() {
        let expected = "5f8f04f6a3a892aaabbddb6cf273894493773960d4a325b105fee46eef4304f1"
        for field in [
            "sha-256=:\(Self.helloWorld):",
            "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:, sha-256=:\(Self.helloWorld):",
            "  sha-256=:\(Self.helloWorld):;keyid=\"a\";n=1  ",
            "unixsum=30637, sha-256=:\(Self.helloWorld):, x=(1 2 \"three\");y, z=?0, d=@1700000000, t=a/b:c, f=-1.5",
            // Without its padding (RFC 8941 §4.2.7 asks parsers to accept it).
            "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE:",
        ] {
            #expect(Self.hex(ReprDigest.sha256(reprDigest: field)) == expected, "\(field)")
        }
    }

    @Test(arguments: [
        "", "sha-256", "sha-256=?1", "sha-256=42", "sha-512=:\(ReprDigestTests.helloWorld):",
        // Not 32 bytes.
        "sha-256=:AAAA:", "sha-256=::", "sha-256=:\(ReprDigestTests.helloWorld)AAAA:",
        // Not base64, not closed, not a dictionary.
        "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBP!=:", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
        "sha-256=:X48E9qOokqqrvdts8nOJ=RJN3OWDUoyWxBf7kbu9DBPE:", "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
        "sha-256=:\(ReprDigestTests.helloWorld):, garbage!", "sha-256=:\(ReprDigestTests.helloWorld):,",
        "SHA-256=:\(ReprDigestTests.helloWorld):",
        "sha-256=\"unterminated", "x=(1 2", "\u{0}\u{1}\u{2}", String(repeating: ":", count: 1000),
    ])
    func malformedReprDigestIsAbsent(field: String) {
        #expect(ReprDigest.sha256(reprDigest: field) == nil, "\(field)")
    }

    @Test func formatsAsTheRFCWritesIt() {
        let empty = [UInt8]([
            0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
            0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
        ])
        #expect(ReprDigest.field(sha256: empty) == "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:")
        #expect(Self.hex(ReprDigest.sha256(reprDigest: ReprDigest.field(sha256: empty))) == Self.emptyHex)
        #expect(ReprDigest.acceptsSHA256(want: ReprDigest.wantSHA256))
    }
}

@Suite struct ReprDigestBase64Tests {
    /// RFC 4648 §10's test vectors.
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func vectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        #expect(Base64.decode(encoded.filter { $0 != "=" }) == Array(plain.utf8))
    }

    @Test(arguments: ["Z", "Zm9vY", "Zg=", "Zg===", "=Zg=", "Zm=8", "Zm9v\n", "Zm 9v", "Zm9v-_"])
    func refuses(encoded: String) {
        #expect(Base64.decode(encoded) == nil)
    }

    @Test func allBytesRoundTrip() {
        let bytes = (0...255).map(UInt8.init)
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }
}

@Suite struct ReprDigestCheckpointTests {
    /// A checkpoint saved before Sluice asked for digests has no `announcedSHA256`.
    @Test func oldCheckpointsDecodeWithoutIt() throws {
        let old =
            #"{"url":"http://h/f","totalBytes":10,"acceptsRanges":true,"written":[{"start":0,"end":5}],"validators":{"etag":"\"x\"","lastModifiedIsStrong":false}}"#
        let checkpoint = try JSONDecoder().decode(DownloadCheckpoint.self, from: Data(old.utf8))
        #expect(checkpoint.announcedSHA256 == nil)
        #expect(checkpoint.writtenBytes == 5)
        #expect(checkpoint.validators?.etag == EntityTag("x"))
    }

    @Test func theAnnouncedDigestRoundTrips() throws {
        let checkpoint = DownloadCheckpoint(
            url: "http://h/f", totalBytes: 10, acceptsRanges: true, announcedSHA256: ReprDigestTests.emptyHex)
        let decoded = try JSONDecoder().decode(DownloadCheckpoint.self, from: JSONEncoder().encode(checkpoint))
        #expect(decoded == checkpoint)
        #expect(decoded.announcedSHA256 == ReprDigestTests.emptyHex)
    }
}
