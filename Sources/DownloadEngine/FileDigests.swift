import Crypto
import NIOPosix
import SluiceCore

/// A file's digest in one of `checksum`'s algorithms, read from disk on the data plane's
/// hashing pool (SHA-256 is hashed while the file arrives: `PrefixHasher`).
enum FileDigests {
    static func hex(_ algorithm: Checksum.Algorithm, of file: PartialFile, length: Int64) async throws -> String {
        try await DataPlane.hashingPool.runIfActive {
            DataPlane.adoptPriority()
            switch algorithm {
            case .sha256: return try hex(SHA256(), file, length)
            case .sha512: return try hex(SHA512(), file, length)
            case .sha1: return try hex(Insecure.SHA1(), file, length)
            case .md5: return try hex(Insecure.MD5(), file, length)
            }
        }
    }

    private static func hex<H: HashFunction>(_ hasher: H, _ file: PartialFile, _ length: Int64) throws -> String {
        var hasher = hasher
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < length {
            let wanted = Int(min(Int64(chunk), length - offset))
            let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: offset)
            guard count > 0 else { throw SluiceError(.io, "the partial file is shorter than \(length) bytes") }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += Int64(count)
        }
        return FileDigest.hex(hasher.finalize())
    }
}
