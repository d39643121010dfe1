import Crypto
import NIOPosix
import SluiceCore
import Synchronization

/// Hashes a partial file front to back while it is being written, following the prefix
/// that is already on disk, so that the SHA-256 is ready (almost) when the last byte lands
/// instead of costing a second pass over the whole file afterwards.
///
/// It reads the bytes back from the page cache: the writers never wait for it.
final class PrefixHasher: Sendable {
    private let state = Mutex<(hasher: SHA256, hashed: Int64)>((SHA256(), 0))
    private let chunk = 1 << 20

    /// Bytes hashed so far, all from offset 0.
    var hashed: Int64 { state.withLock { $0.hashed } }

    /// Hashes `[hashed, target)`; blocking (run it off the cooperative pool).
    /// Only one caller hashes at a time (the follower, then `finish`), so the lock is
    /// held across the reads without contention.
    func advance(file: PartialFile, to target: Int64) throws {
        try state.withLock { state in
            guard target > state.hashed else { return }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
            defer { buffer.deallocate() }
            while state.hashed < target {
                let wanted = Int(min(Int64(chunk), target - state.hashed))
                let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: state.hashed)
                guard count > 0 else { throw SluiceError(.io, "the partial file is shorter than \(target) bytes") }
                state.hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                state.hashed += Int64(count)
            }
        }
    }

    /// Follows the written prefix until cancelled, on the data plane's hashing pool: it sleeps until the
    /// writers have put `step` more bytes (or the rest of the file) on disk past what it
    /// hashed, hashes what is there at most 64 MiB at a time (so that a pause never waits
    /// long for it), and waits again.
    func follow(file: PartialFile, state: DownloadState, step: Int64 = 8 << 20) async {
        while !Task.isCancelled {
            let total = state.remote?.totalBytes ?? .max
            let target = hashed + min(state.contiguousPrefix - hashed, 64 << 20)
            if target > hashed {
                do {
                    try await DataPlane.hashingPool.runIfActive {
                        DataPlane.adoptPriority()
                        try self.advance(file: file, to: target)
                    }
                } catch {
                    return  // finish() hashes whatever is left, and reports errors then.
                }
            } else if hashed >= total {
                return
            } else {
                await state.waitForPrefix(hashed + min(step, total - hashed))
            }
        }
    }

    /// Hashes the rest up to `length` and returns the hex digest.
    func finish(file: PartialFile, length: Int64) async throws -> String {
        try await DataPlane.hashingPool.runIfActive {
            DataPlane.adoptPriority()
            try self.advance(file: file, to: length)
        }
        return state.withLock { FileDigest.hex($0.hasher.finalize()) }
    }
}
