import Testing

@testable import SluiceCore

@Suite struct ByteSizeTests {
    @Test func parses() {
        #expect(ByteSize.parse("0") == 0)
        #expect(ByteSize.parse("123") == 123)
        #expect(ByteSize.parse("64K") == 65536)
        #expect(ByteSize.parse("10M") == 10_485_760)
        #expect(ByteSize.parse("1G") == 1_073_741_824)
        #expect(ByteSize.parse("1024G") == 1 << 40)
        #expect(ByteSize.parse("1025G") == nil)
        #expect(ByteSize.parse("-1") == nil)
        #expect(ByteSize.parse("1.5M") == nil)
        #expect(ByteSize.parse("") == nil)
        #expect(ByteSize.parse("M") == nil)
        #expect(ByteSize.parse("99999999999999999999999") == nil)
    }
}

@Suite struct SafeRelativePathTests {
    @Test(arguments: ["..", "a/../b", "%2e%2e", "%2E%2e/x", "a%2fb", "a%5cb", "a%00b", "", "a//b", "a/", "/a", ".", "%", "%zz", "a\u{01}b"])
    func refuses(path: String) {
        #expect(SafeRelativePath(encoded: path) == nil)
    }

    @Test func decodesOnce() {
        #expect(SafeRelativePath(encoded: "dir/my%20file.iso")?.segments == ["dir", "my file.iso"])
        #expect(SafeRelativePath(encoded: "%252e%252e")?.segments == ["%2e%2e"])
        #expect(SafeRelativePath(encoded: "caf%C3%A9")?.segments == ["café"])
    }
}

@Suite struct TestDataContentTests {
    /// splitmix64 written out again here, independent of the implementation under test.
    static func reference(seed: UInt64, offset: Int64) -> UInt8 {
        var z = seed &+ UInt64(offset / 8) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z = z ^ (z >> 31)
        return UInt8((z >> (8 * UInt64(offset % 8))) & 0xFF)
    }

    @Test(arguments: [(0, 0..<64), (0, 3..<29), (7, 5..<6), (42, 1_000_001..<1_000_100), (UInt64.max, 0..<17)] as [(UInt64, Range<Int64>)])
    func matchesReference(seed: UInt64, range: Range<Int64>) {
        let bytes = TestDataContent(seed: seed).bytes(range)
        #expect(bytes == range.map { Self.reference(seed: seed, offset: $0) })
    }

    @Test func knownFirstWord() {
        // splitmix64(0) = 0xE220A8397B1DCDAF, little-endian.
        #expect(TestDataContent().bytes(0..<8) == [0xAF, 0xCD, 0x1D, 0x7B, 0x39, 0xA8, 0x20, 0xE2])
    }
}

@Suite struct PostgresLocationTLSTests {
    @Test(arguments: [
        ("", PostgresLocation.SSLMode.prefer), ("?sslmode=disable", .disable), ("?sslmode=allow", .prefer),
        ("?sslmode=require", .require), ("?sslmode=verify-ca", .verifyCA), ("?sslmode=verify-full", .verifyFull),
    ])
    func sslModeAsLibpqSpellsIt(query: String, mode: PostgresLocation.SSLMode) throws {
        let location = try PostgresLocation("postgres://u:p@db:5432/sluice" + query)
        #expect(location.sslMode == mode)
        #expect(location.sslRootCertificate == nil)
    }

    @Test func sslRootCertNamesAFile() throws {
        let location = try PostgresLocation("postgresql://u@db/sluice?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem")
        #expect(location.sslRootCertificate == "/etc/ssl/db-ca.pem")
        #expect(location.redacted == "postgres://u@db:5432/sluice")
    }
}
