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
