/// The integrity fields of RFC 9530 for SHA-256, the one algorithm Sluice sends and checks.
///
/// `Want-Repr-Digest: sha-256=9` asks for the digest of the whole representation (not of
/// the range a 206 carries); `Repr-Digest: sha-256=:BASE64:` gives it. Both are Structured
/// Field Dictionaries; a field that does not parse, or whose SHA-256 is not 32 bytes, is
/// treated as absent: a remote's garbled header never fails a download, only a wrong digest does.
public enum ReprDigest {
    /// The algorithm key of SHA-256 in the IANA digest algorithm registry.
    public static let sha256Key = "sha-256"

    /// What a downloader sends: SHA-256, strongly preferred (preferences run 1 to 10).
    public static let wantSHA256 = "sha-256=9"

    /// Whether a `Want-Repr-Digest` value (field lines joined with `,`) accepts SHA-256:
    /// its preference is an integer from 1 to 10. 0 means "not acceptable" (§4); a value
    /// out of range, not an integer, or a field that does not parse asks for nothing.
    public static func acceptsSHA256(want field: some StringProtocol) -> Bool {
        guard case .integer(let preference)? = StructuredDictionary(parsing: field)?[sha256Key] else { return false }
        return (1...10).contains(preference)
    }

    /// The SHA-256 a `Repr-Digest` value (field lines joined with `,`) gives: exactly 32
    /// bytes, else nil. Other algorithms and parameters are ignored.
    public static func sha256(reprDigest field: some StringProtocol) -> [UInt8]? {
        guard case .bytes(let digest)? = StructuredDictionary(parsing: field)?[sha256Key], digest.count == 32 else {
            return nil
        }
        return digest
    }

    /// The `Repr-Digest` value for a SHA-256: `sha-256=:BASE64:`.
    public static func field(sha256 digest: some Collection<UInt8>) -> String {
        "\(sha256Key)=:\(Base64.encode(digest)):"
    }
}
