import SluiceCore
import SluiceSystem

/// Moves a finished partial file to its destination with `rename`/`link`: the same file
/// system, never a copy through memory.
enum FilePlacement {
    /// Places `partial` and returns the final path. A directory destination is opened
    /// first and the file linked into the directory opened, never by its path again.
    static func place(_ partial: String, at destination: DownloadTarget.Destination, name: String) throws -> String {
        switch destination {
        case .file(let path):
            if path != partial, rename(partial, path) != 0 {
                throw PartialFile.error("cannot move the finished file into place", path: path, errno: errno)
            }
            return path
        case .directory(let directory):
            let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw PartialFile.error("cannot open the directory to place the finished file in", path: directory, errno: errno)
            }
            defer { close(descriptor) }
            return try place(partial, into: descriptor, shownAs: directory, name: name)
        }
    }

    /// Places `partial` in a sub-directory of `root` (aria2's `dir`), opened beneath the
    /// root one component at a time (`Subdirectory.open`): the file lands in the directory
    /// that was checked, whatever is swapped for a symlink meanwhile. `afterOpening` runs
    /// between the open and the link (tests make that swap there).
    static func place(
        _ partial: String, under root: String, in relative: String, name: String, afterOpening: () -> Void = {}
    ) throws -> String {
        let descriptor: Int32
        switch Subdirectory.open(relative, under: root) {
        case .success(let opened): descriptor = opened
        case .failure(let problem): throw SluiceError(.io, problem.message)
        }
        defer { close(descriptor) }
        afterOpening()
        return try place(partial, into: descriptor, shownAs: root + "/" + relative, name: name)
    }

    /// Links `partial` into the directory open as `directory` under the first free name
    /// (`name`, `name (1)`, ...); `shownAs` is that directory's path, for the result.
    private static func place(_ partial: String, into directory: Int32, shownAs path: String, name: String) throws -> String {
        for number in 0..<10_000 {
            let candidate = number == 0 ? name : FileNameSanitizer.numbered(name, number)
            // linkat() fails with EEXIST instead of replacing: no race with another job.
            if linkat(AT_FDCWD, partial, directory, candidate, 0) == 0 {
                unlink(partial)
                return path + "/" + candidate
            }
            switch errno {
            case EEXIST:
                continue
            case EPERM, EXDEV, ENOTSUP, EMLINK:
                // No hard links here: check, then rename (a narrow race, but no overwrite
                // of a file that existed before the check).
                if faccessat(directory, candidate, F_OK, AT_SYMLINK_NOFOLLOW) == 0 { continue }
                guard renameat(AT_FDCWD, partial, directory, candidate) == 0 else {
                    throw PartialFile.error("cannot move the finished file into place", path: path + "/" + candidate, errno: errno)
                }
                return path + "/" + candidate
            default:
                throw PartialFile.error("cannot move the finished file into place", path: path + "/" + candidate, errno: errno)
            }
        }
        throw SluiceError(.io, "no free name for \(name) in the documents directory")
    }

    /// Where a placement recorded in `intent` put the file, if it did: the candidate name
    /// holding the same inode. A partial file still linked there (the process died between
    /// `link` and `unlink`) is removed. Nil when the file was never placed.
    static func find(_ intent: DownloadCheckpoint.Placement, at destination: DownloadTarget.Destination, partial: String) -> String? {
        func isIntended(_ path: String) -> Bool {
            guard let status = FileStatus(path: path) else { return false }
            return status.device == intent.device && status.inode == intent.inode && status.size == intent.size
        }
        let candidates: [String]
        switch destination {
        case .file(let path): candidates = [path]
        case .directory(let directory):
            candidates = (0..<10_000).map {
                directory + "/" + ($0 == 0 ? intent.fileName : FileNameSanitizer.numbered(intent.fileName, $0))
            }
        }
        guard let placed = candidates.first(where: isIntended), placed != partial else { return nil }
        if isIntended(partial) { unlink(partial) }
        return placed
    }
}

extension DownloadTarget {
    /// Moves the finished partial file to its destination under `name` (the first free
    /// name in a directory) and returns where it is now. Under `root` (aria2's `dir`), the
    /// directories are opened beneath the root and the file linked into what was opened.
    public func place(name: String) throws -> String {
        if let root, case .directory(let directory) = destination, let relative = directory.bytesAfter(prefix: root + "/") {
            return try FilePlacement.place(partialPath, under: root, in: String(relative), name: name)
        }
        return try FilePlacement.place(partialPath, at: destination, name: name)
    }
}
