import SluiceCore
import SluiceSystem

/// A regular file opened for reading, closed when the last response using it is done
/// (and the open-file cache has let go of it).
final class OpenFile: Sendable {
    /// What makes a file the same file: a different device, inode, size or modification
    /// time is a different representation (and the key of its remembered SHA-256).
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64

        init(_ status: FileStatus) {
            device = status.device
            inode = status.inode
            size = status.size
            modifiedSeconds = status.modifiedSeconds
            modifiedNanoseconds = status.modifiedNanoseconds
        }
    }

    let descriptor: Int32
    let identity: Identity
    var size: Int64 { identity.size }

    /// Takes `fd` (opened non-blocking, so that a FIFO without a writer never blocks the
    /// thread in `open()`) when it is a regular file; anything else (FIFO, device, socket,
    /// directory) is refused after `fstat`, and closed.
    init?(descriptor fd: Int32) {
        guard let status = FileStatus(descriptor: fd), status.isRegularFile, status.size >= 0 else {
            close(fd)
            return nil
        }
        self.descriptor = fd
        self.identity = Identity(status)
    }

    deinit {
        close(descriptor)
    }

    /// True while `path` (as the request names it under the root, symlinks and all) still
    /// leads to this very file, unchanged: one `stat` instead of resolving and opening again.
    /// A path that now leads elsewhere (a symlinked directory pointed at a new release, a
    /// link out of the root, a deleted link) names another inode or none, and is resolved
    /// again from the root.
    func isCurrent(at path: String) -> Bool {
        guard let status = FileStatus(path: path) else { return false }
        return status.isRegularFile && Identity(status) == identity
    }

    /// Whether the open file still reaches `end` (a file cut short under a send does not).
    func holds(_ end: Int64) -> Bool {
        guard let status = FileStatus(descriptor: descriptor) else { return false }
        return status.size >= end
    }

    /// The strong tag: the file's identity. Seconds and nanoseconds stay separate: a date
    /// centuries away must not overflow (it used to, and crashed the process).
    var entityTag: EntityTag {
        EntityTag(
            [
                identity.device, identity.inode, UInt64(identity.size), UInt64(bitPattern: identity.modifiedSeconds),
                UInt64(truncatingIfNeeded: identity.modifiedNanoseconds),
            ].map { String($0, radix: 16) }.joined(separator: "-")
        )
    }

    /// The validators at `now` (seconds since 1970), from the tag made once. Last-Modified is
    /// weak for a file modified within the last second, and absent before 1970 or past
    /// what HTTP dates show.
    func validators(tag: EntityTag, now: Int64) -> Validators {
        let mtime = identity.modifiedSeconds
        let lastModified = (0...HTTPDate.latestFormattable).contains(mtime) ? mtime : nil
        let (age, overflow) = now.subtractingReportingOverflow(mtime)
        return Validators(etag: tag, lastModified: lastModified, lastModifiedIsStrong: !overflow && age >= 1)
    }
}

/// Maps URL paths to files strictly below a root directory.
struct FileRoot: Sendable {
    /// The root with symlinks resolved, without a trailing slash.
    let resolvedRoot: String
    /// The root as the operator named it, when that is another absolute path (through a
    /// symlink): absolute symlinks under the root may be written with it.
    let givenRoot: String?

    init(path: String) throws {
        guard let resolved = realpath(path, nil) else {
            throw SluiceError(.notFound, "origin root \(path) does not exist")
        }
        defer { free(resolved) }
        self.resolvedRoot = String(cString: resolved)
        var given = path
        while given.count > 1, given.hasSuffix("/") { given.removeLast() }
        self.givenRoot = given.hasPrefix("/") && given != resolvedRoot ? given : nil
    }

    /// The path a request names under the root, as named: symlinks not followed yet.
    func joined(_ path: SafeRelativePath) -> String {
        resolvedRoot + "/" + path.description
    }

    /// The regular file a request names, opened beneath the root (`OpenBeneath`): symlinks
    /// that stay inside it, relative or absolute, are followed; nil when it is missing, not a
    /// regular file, or leads outside the root.
    func open(_ path: SafeRelativePath) -> OpenFile? {
        OpenBeneath.file(path.segments, under: resolvedRoot, aliases: givenRoot.map { [$0] } ?? []).flatMap(OpenFile.init(descriptor:))
    }
}
