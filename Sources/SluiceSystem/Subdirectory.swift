#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A sub-directory of a root (aria2's `dir` under the documents), walked one component at
/// a time: every component that exists must resolve, symlinks followed, to a directory
/// inside the root. Creating, each missing one is made before the next is looked at, so
/// nothing is ever made beneath a component that leads out.
public enum Subdirectory {
    /// Why `relative` (plain names joined by `/`) is not a directory inside `root`, or nil
    /// when it is. Without `creating`, a missing component ends the walk: what follows it
    /// will be made inside the root.
    public static func problem(_ relative: String, under root: String, creating: Bool) -> String? {
        // Messages reach API users: they name the path within the documents, never the
        // service's own directories.
        guard let base = resolved(root) else { return "the documents directory is missing" }
        var path = root
        var shown = "documents"
        for name in relative.split(separator: "/") {
            path += "/" + name
            shown += "/" + name
            if creating, mkdir(path, 0o700) != 0, errno != EEXIST {
                return "cannot create the directory \(shown): \(String(cString: strerror(errno)))"
            }
            var status = stat()
            guard lstat(path, &status) == 0 else {
                if errno == ENOENT, !creating { return nil }
                return "cannot read the directory \(shown): \(String(cString: strerror(errno)))"
            }
            guard let target = resolved(path), target == base || target.hasPrefix(base == "/" ? "/" : base + "/") else {
                return "\(shown) leads out of the documents directory"
            }
            guard stat(target, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return "\(shown) is not a directory" }
        }
        return nil
    }

    /// The absolute path with every symlink resolved; nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
