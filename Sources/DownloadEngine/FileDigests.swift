import Crypto
public import Foundation
import NIOPosix
import Synchronization
public import SluiceCore

/// Digests in any of `checksum`'s algorithms: of bytes in memory, or of a file read from disk
/// on the data plane's hashing pool (SHA-256 is hashed while the file arrives: `PrefixHasher`).
public enum FileDigests {
    /// `bytes`' digest in `algorithm`, in lowercase hexadecimal.
    public static func hex(_ algorithm: Checksum.Algorithm, of bytes: some DataProtocol) -> String {
        var hasher = Hasher(algorithm)
        Data(bytes).withUnsafeBytes { hasher.update($0) }
        return hasher.hex
    }

    static func hex(_ algorithm: Checksum.Algorithm, of file: PartialFile, length: Int64) async throws -> String {
        try await fold(file, length: length, start: { Hasher(algorithm) }, update: { $0.update($1) }, finish: { $0.hex })
    }

    /// Reads the first `length` bytes of `file` a megabyte at a time on the hashing pool,
    /// folding each piece into a state `start` makes (a hasher), whose `finish` is the
    /// answer: every read of a finished file (a digest of another algorithm, a signature's
    /// BLAKE2b or bytes) goes through here. A cancelled task stops it between two pieces.
    static func fold<State, Output: Sendable>(
        _ file: PartialFile, length: Int64, start: @escaping @Sendable () -> State,
        update: @escaping @Sendable (inout State, UnsafeRawBufferPointer) -> Void, finish: @escaping @Sendable (State) -> Output
    ) async throws -> Output {
        let stopped = StopFlag()
        return try await withTaskCancellationHandler {
            try await DataPlane.hashingPool.runIfActive {
                DataPlane.adoptPriority()
                var state = start()
                let chunk = 1 << 20
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
                defer { buffer.deallocate() }
                var offset: Int64 = 0
                while offset < length {
                    if stopped.isSet { throw CancellationError() }
                    let wanted = Int(min(Int64(chunk), length - offset))
                    let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: offset)
                    guard count > 0 else { throw SluiceError(.io, "the partial file is shorter than \(length) bytes") }
                    update(&state, UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    offset += Int64(count)
                }
                return finish(state)
            }
        } onCancel: {
            stopped.set()
        }
    }

    /// Set when the task reading a file is cancelled: the pool's thread has no task to ask.
    private final class StopFlag: Sendable {
        private let flag = Mutex(false)
        var isSet: Bool { flag.withLock { $0 } }
        func set() { flag.withLock { $0 = true } }
    }

    /// One of the four hash functions, chosen by the algorithm.
    private enum Hasher {
        case sha256(SHA256)
        case sha512(SHA512)
        case sha1(Insecure.SHA1)
        case md5(Insecure.MD5)

        init(_ algorithm: Checksum.Algorithm) {
            switch algorithm {
            case .sha256: self = .sha256(SHA256())
            case .sha512: self = .sha512(SHA512())
            case .sha1: self = .sha1(Insecure.SHA1())
            case .md5: self = .md5(Insecure.MD5())
            }
        }

        mutating func update(_ buffer: UnsafeRawBufferPointer) {
            switch self {
            case .sha256(var hasher):
                hasher.update(bufferPointer: buffer)
                self = .sha256(hasher)
            case .sha512(var hasher):
                hasher.update(bufferPointer: buffer)
                self = .sha512(hasher)
            case .sha1(var hasher):
                hasher.update(bufferPointer: buffer)
                self = .sha1(hasher)
            case .md5(var hasher):
                hasher.update(bufferPointer: buffer)
                self = .md5(hasher)
            }
        }

        var hex: String {
            switch self {
            case .sha256(let hasher): FileDigest.hex(hasher.finalize())
            case .sha512(let hasher): FileDigest.hex(hasher.finalize())
            case .sha1(let hasher): FileDigest.hex(hasher.finalize())
            case .md5(let hasher): FileDigest.hex(hasher.finalize())
            }
        }
    }
}
