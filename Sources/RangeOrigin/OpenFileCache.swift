import SluiceCore
import Synchronization

/// Open files by request path, like nginx's `open_file_cache`: a hit costs one `stat` of
/// the resolved path (checked by inode, size and modification time) instead of `realpath`
/// (a `readlink` per path component), `open`, `fstat` and `close`. Bounded: past
/// `capacity` files the least recently used is dropped; its descriptor closes when the
/// last response still sending from it is done.
final class OpenFileCache: Sendable {
    private struct Entry {
        var file: OpenFile
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
    }

    /// The open file `path` names under `root`, or nil when it is unsafe, missing, not a
    /// regular file, or resolves outside the root.
    func file(_ path: SafeRelativePath, in root: FileRoot) -> OpenFile? {
        let key = path.description
        let cached = state.withLock { state -> OpenFile? in
            state.clock += 1
            guard let entry = state.entries[key] else { return nil }
            state.entries[key]!.lastUse = state.clock
            return entry.file
        }
        if let cached, cached.isCurrent { return cached }
        guard let resolved = root.resolve(path), let file = OpenFile(resolvedPath: resolved) else {
            state.withLock { _ = $0.entries.removeValue(forKey: key) }
            return nil
        }
        state.withLock { state in
            if state.entries[key] == nil, state.entries.count >= capacity,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.entries.removeValue(forKey: oldest)
            }
            state.entries[key] = Entry(file: file, lastUse: state.clock)
        }
        return file
    }

    var count: Int { state.withLock { $0.entries.count } }
}
