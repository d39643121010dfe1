/// Digests as lowercase hex: a file's SHA-256, a stored token's.
public enum FileDigest {
    /// A `SHA256.Digest`, or the bytes of one a server announced.
    public static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}
