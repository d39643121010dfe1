import Crypto
import SluiceCore

/// SHA-256 of a file read back from disk in large chunks (used when the download was not
/// hashed while streaming: several connections, or a resume).
enum FileDigest {
    static func sha256(of file: PartialFile, length: Int64) throws -> String {
        var hasher = SHA256()
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < length {
            let wanted = Int(min(Int64(chunk), length - offset))
            let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: offset)
            guard count > 0 else { throw SluiceError(.io, "\(file.path) is shorter than \(length) bytes") }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += Int64(count)
        }
        return hex(hasher.finalize())
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}
