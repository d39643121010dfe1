#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SluiceCore
import SluiceSystem

/// Moves a finished partial file to its destination with `rename`/`link`: the same file
/// system, never a copy through memory.
enum FilePlacement {
    /// Places `partial` and returns the final path.
    static func place(_ partial: String, at destination: DownloadTarget.Destination, name: String) throws -> String {
        switch destination {
        case .file(let path):
            if path != partial, rename(partial, path) != 0 {
                throw PartialFile.error("cannot move the finished file into place", path: path, errno: errno)
            }
            return path
        case .directory(let directory):
            for number in 0..<10_000 {
                let candidate = directory + "/" + (number == 0 ? name : FileNameSanitizer.numbered(name, number))
                // link() fails with EEXIST instead of replacing: no race with another job.
                if link(partial, candidate) == 0 {
                    unlink(partial)
                    return candidate
                }
                switch errno {
                case EEXIST:
                    continue
                case EPERM, EXDEV, ENOTSUP, EMLINK:
                    // No hard links here: check, then rename (a narrow race, but no overwrite
                    // of a file that existed before the check).
                    if access(candidate, F_OK) == 0 { continue }
                    guard rename(partial, candidate) == 0 else {
                        throw PartialFile.error("cannot move the finished file into place", path: candidate, errno: errno)
                    }
                    return candidate
                default:
                    throw PartialFile.error("cannot move the finished file into place", path: candidate, errno: errno)
                }
            }
            throw SluiceError(.io, "no free name for \(name) in the documents directory")
        }
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
