import SluiceCore
import Testing

/// What gpgv's status lines say (its documented `--status-fd` format, doc/DETAILS in GnuPG):
/// a good signature names its primary key; anything else names none.
@Suite struct OpenPGPTextTests {
    static let fingerprint = "D8F5E3C1B0A4F6E2C9B7A5D3E1F0C2B4A6D8E0F2"
    static let subkey = "0123456789ABCDEF0123456789ABCDEF01234567"
    static let good = """
        [GNUPG:] NEWSIG
        [GNUPG:] KEY_CONSIDERED \(fingerprint) 0
        [GNUPG:] SIG_ID abc 2026-12-08 1796000000
        [GNUPG:] GOODSIG 89ABCDEF01234567 Archive <archive@example.com>
        [GNUPG:] VALIDSIG \(subkey) 2026-12-08 1796000000 0 4 0 22 10 00 \(fingerprint)
        """

    @Test func aGoodSignatureNamesItsPrimaryKey() {
        #expect(OpenPGPText.verifiedKey(status: Self.good) == Self.fingerprint)
        // Without the primary key's field (older gpgv), the signing key's.
        let short = "[GNUPG:] GOODSIG 1 A\n[GNUPG:] VALIDSIG \(Self.subkey) 2026-12-08 1796000000 0 4 0 22 10 00"
        #expect(OpenPGPText.verifiedKey(status: short) == Self.subkey)
    }

    @Test(arguments: [
        "BADSIG 89ABCDEF01234567 A", "ERRSIG 89ABCDEF01234567 22 10 00 1796000000 9 -", "EXPKEYSIG 1 A", "REVKEYSIG 1 A", "EXPSIG 1 A",
        "PLAINTEXT 74 0 ",
    ])
    func anythingButAGoodSignatureNamesNoKey(line: String) {
        #expect(OpenPGPText.verifiedKey(status: Self.good + "\n[GNUPG:] " + line) == nil)
        #expect(OpenPGPText.verifiedKey(status: "[GNUPG:] " + line) == nil)
    }

    @Test func aValidSignatureWithoutGoodsigOrNoStatusNamesNoKey() {
        #expect(OpenPGPText.verifiedKey(status: "[GNUPG:] VALIDSIG \(Self.subkey) 2026-12-08") == nil)
        #expect(OpenPGPText.verifiedKey(status: "") == nil)
        #expect(OpenPGPText.verifiedKey(status: "GOODSIG VALIDSIG nonsense") == nil)
    }

    @Test func armorIsTakenOffAndACutBlockIsRefused() {
        let armored = """
            -----BEGIN PGP PUBLIC KEY BLOCK-----
            Comment: a header

            AQID
            BAU=
            =abcd
            -----END PGP PUBLIC KEY BLOCK-----
            -----BEGIN PGP PUBLIC KEY BLOCK-----

            Bg==
            -----END PGP PUBLIC KEY BLOCK-----
            """
        #expect(OpenPGPText.dearmor(armored) == [1, 2, 3, 4, 5, 6])
        #expect(OpenPGPText.dearmor("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAQID\n") == nil)
        #expect(OpenPGPText.dearmor("no armor here") == nil)
        #expect(OpenPGPText.dearmor("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!\n-----END PGP PUBLIC KEY BLOCK-----") == nil)
    }
}

/// minisign's key ids as minisign prints them (`%PRIX64` of the little-endian number): a
/// leading zero is not printed, which one key in sixteen has (found by a test that compared
/// with minisign's own output and failed now and then).
@Suite struct MinisignKeyIDTests {
    @Test func aKeyIDIsPrintedAsMinisignPrintsIt() throws {
        // `Ed`, the key id 54 2A 30 83 40 73 66 01 (little-endian), 32 bytes of key.
        let bytes: [UInt8] = [0x45, 0x64, 0x54, 0x2A, 0x30, 0x83, 0x40, 0x73, 0x66, 0x01] + [UInt8](repeating: 7, count: 32)
        let key = try Minisign.PublicKey(parsing: "untrusted comment: minisign public key 166734083302A54\n" + Base64.encode(bytes))
        #expect(key.idText == "166734083302A54")
        let padded: [UInt8] = [0x45, 0x64, 0x01, 0, 0, 0, 0, 0, 0, 0x80] + [UInt8](repeating: 7, count: 32)
        #expect(try Minisign.PublicKey(parsing: Base64.encode(padded)).idText == "8000000000000001")
    }

    @Test func whatIsNotAKeyOrASignatureIsRefused() {
        #expect(throws: Minisign.Malformed.self) { try Minisign.PublicKey(parsing: "untrusted comment: x\nAAAA") }
        #expect(throws: Minisign.Malformed.self) { try Minisign.Signature(parsing: Array("untrusted comment: x\nAAAA\n".utf8)) }
        #expect(throws: Minisign.Malformed.self) { try Minisign.Signature(parsing: [UInt8](repeating: 65, count: 70_000)) }
    }
}
