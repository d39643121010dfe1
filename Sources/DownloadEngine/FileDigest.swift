import Crypto
import SluiceCore

/// Digests as lowercase hex.
enum FileDigest {
    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}
