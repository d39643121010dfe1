/// The little of OpenPGP that is text, not packets: ASCII armor taken off a key file (RFC
/// 4880 §6, what `gpg --dearmor` does, so that `gpgv` gets the binary keyring it reads), and
/// the status lines `gpgv --status-fd` writes. Packets are never parsed here: `gpgv` checks
/// signatures, as apt has it do.
public enum OpenPGPText {
    /// The binary packets of every armored block in `text`; nil when it holds none, or one
    /// whose base64 does not decode.
    public static func dearmor(_ text: String) -> [UInt8]? {
        var packets: [UInt8] = []
        var found = false
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { $0.trimmingWhitespace }[...]
        while let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN PGP ") }) {
            lines = lines[(begin + 1)...]
            // Armor headers (`Comment: …`) end at the first empty line.
            guard let blank = lines.firstIndex(where: \.isEmpty) else { return nil }
            lines = lines[(blank + 1)...]
            guard let end = lines.firstIndex(where: { $0.hasPrefix("-----END PGP ") }) else { return nil }
            // The body, without its CRC-24 line (`=XXXX`).
            let body = lines[..<end].filter { !$0.hasPrefix("=") }.joined()
            guard let bytes = Base64.decode(body), !bytes.isEmpty else { return nil }
            packets += bytes
            found = true
            lines = lines[(end + 1)...]
        }
        return found ? packets : nil
    }

    /// What `gpgv --status-fd` said of one signature: the fingerprint of the primary key that
    /// made a good signature (`VALIDSIG`'s last field, else its first), or nil when no good
    /// signature was reported, or one by an expired or revoked key, or an expired
    /// signature, or a bad one, or the signature was not detached (`PLAINTEXT`).
    public static func verifiedKey(status: String) -> String? {
        var valid: String?
        var good = false
        for line in status.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, fields[0] == "[GNUPG:]" else { continue }
            switch fields[1] {
            case "GOODSIG": good = true
            case "VALIDSIG" where fields.count >= 3:
                valid = String(fields.count >= 12 ? fields[11] : fields[2])
            // PLAINTEXT: the "signature" held signed data of its own (not detached), and that,
            // not the file, is what was verified.
            case "BADSIG", "ERRSIG", "EXPSIG", "EXPKEYSIG", "REVKEYSIG", "PLAINTEXT": return nil
            default: continue
            }
        }
        return good ? valid : nil
    }
}
