import SluiceCore
import SluiceSystem

/// The file a download writes into, at offsets, from several tasks at once (`pwrite` is
/// positional, so no shared cursor). Closed on deinit.
final class PartialFile: Sendable {
    let path: String
    let descriptor: Int32

    /// Opens `path` for writing, creating it if needed; never truncates. A symbolic link there
    /// is not followed (`O_NOFOLLOW`): whoever could put one in the cache directory must not
    /// make a download write elsewhere.
    init(path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { throw SluiceError(.io, "the partial file \(path) is a symbolic link; it is not followed") }
            throw Self.error("cannot open the partial file", path: path, errno: code)
        }
        self.path = path
        self.descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// The current size on disk.
    func size() throws -> Int64 {
        guard let status = FileStatus(descriptor: descriptor) else {
            throw Self.error("cannot stat the partial file", path: path, errno: errno)
        }
        return status.size
    }

    /// The file's device and inode: what `link` and `rename` keep.
    func identity() throws -> (device: UInt64, inode: UInt64) {
        guard let status = FileStatus(descriptor: descriptor) else {
            throw Self.error("cannot stat the partial file", path: path, errno: errno)
        }
        return (status.device, status.inode)
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let result = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if result >= 0 {
                done += result
            } else if errno != EINTR {
                throw Self.error("cannot write the partial file", path: path, errno: errno)
            }
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns the count read (0 at the end).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        while true {
            let result = pread(descriptor, buffer.baseAddress!, buffer.count, off_t(offset))
            if result >= 0 { return result }
            if errno != EINTR { throw Self.error("cannot read the partial file", path: path, errno: errno) }
        }
    }

    /// Makes what was written durable, so that a checkpoint saved next claims nothing
    /// that a power loss could take back.
    func sync() throws {
        guard fsync(descriptor) == 0 else { throw Self.error("cannot sync the partial file", path: path, errno: errno) }
    }

    func truncate(to length: Int64 = 0) throws {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw Self.error("cannot truncate the partial file", path: path, errno: errno)
        }
    }

    /// Reserves the file's full length up front, so that a full disk shows at the start
    /// rather than half way, but only when it fits above `floor` (docs/security.md, "Disk"):
    /// otherwise `no_space`, or `file_too_large` when the file system could never hold it. A
    /// failed reservation gives back what it took. Where the file system cannot reserve, the
    /// check alone is made.
    func reserve(_ length: Int64, keepingFree floor: Int64?) throws {
        guard length > 0 else { return }
        guard let fileSystem = FileSystemSpace(descriptor: descriptor), let status = FileStatus(descriptor: descriptor) else {
            throw Self.error("cannot read the file system's free space", path: path, errno: errno)
        }
        let space = fileSystem.bytes
        let allocated = SpaceReservation.FileSystem.bytes(512, status.allocatedBlocks)
        switch SpaceReservation.verdict(length: length, allocated: allocated, on: space, floor: floor) {
        case .tooLarge(let message): throw SluiceError(.fileTooLarge, message)
        case .noSpace(let message): throw SluiceError(.noSpace, message)
        case .reserve: break
        }
        #if canImport(Glibc)
        let previousSize = status.size
        let result = posix_fallocate(descriptor, 0, off_t(length))
        guard result == 0 || result == EOPNOTSUPP || result == EINVAL else {
            // ext4 keeps what a failed fallocate reserved: give it back.
            _ = ftruncate(descriptor, off_t(previousSize))
            throw Self.error("cannot reserve \(ByteSize.human(length)) for the partial file", path: path, errno: result)
        }
        #endif
    }

    /// The error for a failed file operation. The message is for API users and names no
    /// path of the service's own; the path goes to the cause, for logs.
    static func error(_ message: String, path: String, errno code: Int32) -> SluiceError {
        let reason = String(cString: strerror(code))
        struct Location: Error, CustomStringConvertible { var description: String }
        let cause = Location(description: path)
        if code == ENOSPC || code == EDQUOT {
            return SluiceError(.noSpace, "\(message): \(reason)", cause: cause)
        }
        if code == EFBIG {
            return SluiceError(.fileTooLarge, "\(message): the file system does not allow a file this large", cause: cause)
        }
        return SluiceError(.io, "\(message): \(reason)", cause: cause)
    }
}
