import SluiceCore
import Testing

/// The digest headers a response may carry for the whole file (CONTRACT.md §8): each read
/// into a checksum, named by its header; what does not parse, or is not for the whole file,
/// is no announcement.
@Suite struct DigestHeadersTests {
    // "hello\n": its SHA-256, MD5 and SHA-1 in base64 (openssl dgst -binary | base64).
    static let sha256 = "WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM="
    static let md5 = "sZRqySSS0jR8YjW00mERhA=="
    static let sha1 = "9XLTlvrpIGYocU+yzgD3LpTyJY8="

    static func announced(_ headers: [String: [String]], whole: Bool = true) -> [String] {
        DigestHeaders.announced({ name in headers.first { $0.key.lowercased() == name.lowercased() }?.value ?? [] }, wholeBody: whole)
            .map { "\($0.header) \($0.checksum)" }
    }

    @Test func everyHeaderIsReadAndNamed() {
        let sha256Hex = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        #expect(Self.announced(["Repr-Digest": ["sha-256=:\(Self.sha256):"]]) == ["repr-digest sha-256=\(sha256Hex)"])
        #expect(
            Self.announced(["Digest": ["SHA-256=\(Self.sha256), MD5=\(Self.md5)", "sha=\(Self.sha1)"]]) == [
                "digest sha-256=\(sha256Hex)", "digest md5=b1946ac92492d2347c6235b4d2611184",
                "digest sha-1=f572d396fae9206628714fb2ce00f72e94f2258f",
            ])
        #expect(Self.announced(["Content-MD5": [Self.md5]]) == ["content-md5 md5=b1946ac92492d2347c6235b4d2611184"])
        #expect(
            Self.announced(["x-goog-hash": ["crc32c=n03x6A==", "md5=\(Self.md5)"]]) == ["x-goog-hash md5=b1946ac92492d2347c6235b4d2611184"])
        #expect(Self.announced(["x-amz-checksum-sha256": [Self.sha256]]) == ["x-amz-checksum-sha256 sha-256=\(sha256Hex)"])
    }

    @Test func whatIsNotForTheWholeFileOrDoesNotParseIsNoAnnouncement() {
        // Content-MD5 is of the body: a part's, on a 206 of some bytes.
        #expect(Self.announced(["Content-MD5": [Self.md5]], whole: false).isEmpty)
        // S3's composite of parts.
        #expect(Self.announced(["x-amz-checksum-sha256": [Self.sha256 + "-3"]]).isEmpty)
        for garbled in [
            ["Repr-Digest": ["sha-256=:AAAA:"]], ["Repr-Digest": ["sha-256=\(Self.sha256)"]], ["Digest": ["SHA-256=not base64!"]],
            ["Digest": ["UNIXsum=30637"]], ["Digest": ["MD5=\(Self.sha256)"]], ["Content-MD5": ["\(Self.md5)", "\(Self.md5)"]],
            ["x-goog-hash": ["md5"]], ["x-amz-checksum-sha256": ["\u{7F}"]],
        ] {
            #expect(Self.announced(garbled).isEmpty, "\(garbled)")
        }
    }
}
