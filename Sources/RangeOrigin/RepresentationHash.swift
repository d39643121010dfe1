import Crypto
import SluiceCore
import SluiceSystem

/// The SHA-256 of a whole representation, read or generated one chunk at a time: memory
/// stays at one chunk whatever the size. Blocking; `DigestCache` runs it on the thread pool.
enum RepresentationHash {
    static let chunkSize = 1 << 20

    /// The SHA-256 of `file`'s bytes, or nil when the file changed while it was read (it
    /// came up short, or its size or modification time moved): a digest of a mix of two
    /// versions must never be remembered for either.
    static func sha256(of file: OpenFile) throws -> [UInt8]? {
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < file.size {
            let count = Int(min(Int64(chunkSize), file.size - offset))
            let read = try FileByteSource.readFully(
                file.descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]), at: offset
            )
            guard read == count else { return nil }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += Int64(count)
        }
        guard let status = FileStatus(descriptor: file.descriptor), OpenFile.Identity(status) == file.identity else {
            return nil
        }
        return Array(hasher.finalize())
    }

    /// The SHA-256 of the first `size` bytes of `content`.
    static func sha256(of content: TestDataContent, size: Int64) -> [UInt8] {
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            let count = Int(min(Int64(chunkSize), size - offset))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            content.fill(chunk, offset: offset)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(chunk))
            offset += Int64(count)
        }
        return Array(hasher.finalize())
    }
}
