import SluiceCore

/// Opens a file named under a root directory one component at a time, each relative to the
/// directory already open (`openat` with `O_NOFOLLOW`). No path is resolved twice, so a
/// directory swapped for a symlink between a check and the open cannot lead out of the root,
/// as it could with `realpath` and then `open`.
///
/// Symlinks are followed by reading them (`readlinkat`) and walking their target the same
/// way: a relative one from the directory that holds it, an absolute one only when it names
/// a place under the root, by its resolved path or by another of its names (then from the
/// root). `..` never goes above the root. Like the
/// kernel, at most 40 links are followed.
public enum OpenBeneath {
    public static let maximumLinks = 40

    /// The descriptor of what `components` name under `root` (its absolute, resolved path),
    /// opened read-only and non-blocking, or nil when it is missing, leaves the root, or
    /// cannot be opened. `aliases` are other absolute names of the root (the path the
    /// operator gave, through a symlink) that absolute symlinks may use. The caller checks
    /// what kind of file it is, and closes it.
    public static func file(_ components: [String], under root: String, aliases: [String] = []) -> Int32? {
        let rootDescriptor = open(root, directoryFlags)
        guard rootDescriptor >= 0 else { return nil }
        var directories = [rootDescriptor]
        defer { for descriptor in directories { close(descriptor) } }
        // What is left to walk, the next component last.
        var pending = Array(components.reversed())
        var links = 0
        while let name = pending.popLast() {
            if name.isEmpty || name == "." { continue }
            if name == ".." {
                guard directories.count > 1 else { return nil }
                close(directories.removeLast())
                continue
            }
            let directory = directories[directories.count - 1]
            if pending.allSatisfy({ $0.isEmpty || $0 == "." }) {
                let file = openat(directory, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
                if file >= 0 { return file }
                // A symlink is refused with `ELOOP`: it is read and walked below.
                guard errno == ELOOP else { return nil }
            } else {
                let next = openat(directory, name, directoryFlags)
                if next >= 0 {
                    let kind = fileKind(next)
                    if kind == S_IFDIR {
                        directories.append(next)
                        continue
                    }
                    close(next)
                    // `O_PATH` with `O_NOFOLLOW` may open a symlink itself: read and walked below.
                    guard kind == S_IFLNK else { return nil }
                } else {
                    guard errno == ELOOP || errno == ENOTDIR else { return nil }
                }
            }
            guard links < maximumLinks, let target = readLink(name, in: directory) else { return nil }
            links += 1
            var relative = Substring(target)
            if target.utf8.first == UInt8(ascii: "/") {
                guard let inside = ([root] + aliases).lazy.compactMap({ Self.path(target, under: $0) }).first else { return nil }
                relative = inside
                for descriptor in directories.dropFirst() { close(descriptor) }
                directories.removeSubrange(1...)
            }
            pending += relative.pathParts.filter { !$0.isEmpty }.reversed()
        }
        return nil
    }

    /// What follows `root` in the absolute path `target`; nil when `target` is not `root` or
    /// a place under it (a sibling sharing its prefix is not).
    private static func path(_ target: String, under root: String) -> Substring? {
        if target.isSameBytes(as: root) { return "" }
        let prefix = root == "/" ? "/" : root + "/"
        return target.bytesAfter(prefix: prefix)
    }

    #if os(Linux)
    /// `O_PATH` (Linux's `010000000` on every architecture Swift builds for): Glibc declares it
    /// only under `_GNU_SOURCE`, which Swift's import does not set. A directory opened so
    /// needs search permission only, and can be used only as the base of `openat`.
    private static let openPath: Int32 = 0o10000000
    private static let directoryFlags = openPath | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    #else
    private static let directoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    #endif

    /// The `S_IFMT` bits of what `descriptor` is open on; 0 when `fstat` fails.
    private static func fileKind(_ descriptor: Int32) -> mode_t {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? info.st_mode & S_IFMT : 0
    }

    /// The target of the symlink `name` in `directory`; nil when it is not one, or longer
    /// than a path may be.
    private static func readLink(_ name: String, in directory: Int32) -> String? {
        let capacity = Int(PATH_MAX) + 1
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer -> String? in
            let count = buffer.withMemoryRebound(to: CChar.self) { readlinkat(directory, name, $0.baseAddress!, capacity) }
            guard count > 0, count < capacity else { return nil }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }
    }
}
