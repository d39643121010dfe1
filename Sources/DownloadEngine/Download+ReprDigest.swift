import AsyncHTTPClient
import NIOHTTP1
import SluiceCore

/// RFC 9530 on the client's side: every request asks for `Repr-Digest` (see `makeRequest`),
/// the answer that describes the file (the probe, a continuation, a whole-file refetch)
/// gives the SHA-256 the finished file must have, and the hash computed anyway for the
/// file (`finish`) is compared with it. No second pass over the file.
extension Download {
    /// The SHA-256 `response` announces in `Repr-Digest`, as lowercase hex; nil when it
    /// announces none, or one that does not parse or is not 32 bytes (ignored: a garbled
    /// field from a remote never fails a download).
    static func announcedSHA256(_ response: HTTPClientResponse) -> String? {
        let values = response.headers["Repr-Digest"]
        guard !values.isEmpty, let digest = ReprDigest.sha256(reprDigest: values.joined(separator: ", ")) else {
            return nil
        }
        return FileDigest.hex(digest)
    }

    /// The failure when the finished file's SHA-256 (`digest`, lowercase hex) is not the
    /// one the remote announced: `checksum_mismatch`, as for a digest the user gave.
    static func announcedDigestMismatch(digest: String, announced: String?) -> SluiceError? {
        guard let announced, announced != digest else { return nil }
        return SluiceError(
            .checksumMismatch, "SHA-256 is \(digest), but the remote's Repr-Digest announced \(announced)"
        )
    }
}
