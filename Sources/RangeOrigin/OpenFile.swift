#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SluiceCore

/// A regular file opened for reading, closed when the last response using it is done.
final class OpenFile: Sendable {
    let descriptor: Int32
    let size: Int64
    let validators: Validators

    /// Opens `path`, which must already be resolved (no symlinks left), as a regular file.
    /// `O_NONBLOCK` keeps a FIFO without a writer from blocking the thread in `open()`;
    /// anything but a regular file (FIFO, device, socket, directory) is refused after `fstat`.
    init?(resolvedPath path: String, now: Int64) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0 else {
            close(fd)
            return nil
        }
        self.descriptor = fd
        self.size = Int64(info.st_size)
        let mtimeSeconds = Int64(info.st_mtim.tv_sec)
        // The file's identity: a different inode, size or modification time is a different
        // representation, so the tag is strong. Seconds and nanoseconds stay separate: a
        // date centuries away must not overflow (it used to, and crashed the process).
        let tag = [
            UInt64(info.st_dev), UInt64(info.st_ino), UInt64(info.st_size), UInt64(bitPattern: mtimeSeconds),
            UInt64(truncatingIfNeeded: info.st_mtim.tv_nsec),
        ].map { String($0, radix: 16) }.joined(separator: "-")
        // A date before 1970 or past what HTTP dates show is sent without Last-Modified.
        let lastModified = (0...HTTPDate.latestFormattable).contains(mtimeSeconds) ? mtimeSeconds : nil
        let (age, overflow) = now.subtractingReportingOverflow(mtimeSeconds)
        self.validators = Validators(
            etag: EntityTag(tag), lastModified: lastModified, lastModifiedIsStrong: !overflow && age >= 1
        )
    }

    deinit {
        close(descriptor)
    }
}

/// Maps URL paths to files strictly below a root directory.
struct FileRoot: Sendable {
    /// The root with symlinks resolved, without a trailing slash.
    let resolvedRoot: String

    init(path: String) throws {
        guard let resolved = realpath(path, nil) else {
            throw SluiceError(.notFound, "origin root \(path) does not exist")
        }
        defer { free(resolved) }
        self.resolvedRoot = String(cString: resolved)
    }

    /// The resolved path of the file a request names, or nil when the name is unsafe, the
    /// file does not exist, or it resolves (through symlinks) outside the root.
    func resolve(_ path: SafeRelativePath) -> String? {
        let joined = resolvedRoot + "/" + path.description
        guard let resolved = realpath(joined, nil) else { return nil }
        defer { free(resolved) }
        let result = String(cString: resolved)
        let prefix = resolvedRoot == "/" ? "/" : resolvedRoot + "/"
        return result.hasPrefix(prefix) && result.count > prefix.count ? result : nil
    }
}
