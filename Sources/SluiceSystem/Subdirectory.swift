import SluiceCore

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
        for name in relative.pathParts where !name.isEmpty {
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
            guard let target = resolved(path),
                target.isSameBytes(as: base) || target.bytesAfter(prefix: base == "/" ? "/" : base + "/") != nil
            else {
                return "\(shown) leads out of the documents directory"
            }
            guard stat(target, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return "\(shown) is not a directory" }
        }
        return nil
    }

    /// The directory `relative` names under `root`, opened one component at a time beneath
    /// it (`OpenBeneath`: no path is resolved twice), each missing one made inside the
    /// directory already open. What is placed through the descriptor lands in the directory
    /// that was checked, even if a component is swapped for a symlink afterwards (issue 35:
    /// checked by path, then linked by path, a finished file was placed outside). The
    /// caller closes it. A problem, in words for API users, when it cannot be opened.
    public static func open(_ relative: String, under root: String) -> Result<Int32, SubdirectoryProblem> {
        guard let base = resolved(root) else { return .failure(.init("the documents directory is missing")) }
        let names = relative.pathParts.filter { !$0.isEmpty }
        var shown = "documents"
        var directory = openDirectory(base)
        guard directory >= 0 else { return .failure(.init("the documents directory cannot be opened")) }
        for index in names.indices {
            shown += "/" + names[index]
            if mkdirat(directory, names[index], 0o700) != 0, errno != EEXIST {
                let reason = String(cString: strerror(errno))
                close(directory)
                return .failure(.init("cannot create the directory \(shown): \(reason)"))
            }
            close(directory)
            guard let next = OpenBeneath.file(Array(names[...index]), under: base, aliases: root == base ? [] : [root]) else {
                return .failure(.init("\(shown) leads out of the documents directory"))
            }
            var status = stat()
            guard fstat(next, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                close(next)
                return .failure(.init("\(shown) is not a directory"))
            }
            directory = next
        }
        return .success(directory)
    }

    /// The absolute path with every symlink resolved; nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

/// Why a sub-directory of the documents cannot be used, in words for API users.
public struct SubdirectoryProblem: Error, Sendable, Equatable {
    public let message: String

    init(_ message: String) {
        self.message = message
    }
}

/// `open(2)` on a directory, read-only: outside `Subdirectory`, whose own `open` would
/// shadow the C function's name.
private func openDirectory(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
}
