import HTTPTypes
import SluiceCore
import Synchronization

/// Open files by request path, like nginx's `open_file_cache`: a hit costs one `stat` of
/// the path as requested (checked by inode, size and modification time) instead of decoding
/// the path, opening it beneath the root (an `openat` per path component), `fstat` and `close`,
/// and the headers that depend only on the file are made once. Keyed by the path as the
/// request spelled it. Bounded: past `capacity` paths the least recently used is dropped;
/// its descriptor closes when the last response still sending from it is done.
final class OpenFileCache: Sendable {
    /// A file and what the origin says of it whatever the request.
    struct CachedFile: Sendable {
        let file: OpenFile
        /// The root joined with the request's path, unresolved: what `isCurrent` checks.
        let requestedPath: String
        let tag: EntityTag
        let contentType: String
        /// Content-Type, Accept-Ranges, ETag, Last-Modified, Cache-Control and the file
        /// safety headers: `RangeDecision.baseHeaders` of its representation, made once.
        private(set) var headers: HTTPFields = [:]

        init(file: OpenFile, requestedPath: String, contentType: String, now: Int64) {
            self.file = file
            self.requestedPath = requestedPath
            self.tag = file.entityTag
            self.contentType = contentType
            headers = RangeDecision.baseHeaders(representation(now: now))
            headers.append(contentsOf: RangeOrigin.fileSafetyHeaders)
        }

        func representation(now: Int64) -> Representation {
            Representation(
                length: file.size, validators: file.validators(tag: tag, now: now), contentType: contentType,
                rangesEnabled: true, cacheControl: "no-cache"
            )
        }
    }

    private struct Entry {
        var file: CachedFile
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Substring: Entry] = [:]
        var clock: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
    }

    /// The open file the percent-encoded `path` names under `root`, or nil when it is
    /// unsafe, missing, not a regular file, or resolves outside the root.
    func file(encoded path: Substring, in root: FileRoot, now: Int64) -> CachedFile? {
        let cached = state.withLock { state -> CachedFile? in
            state.clock += 1
            guard let entry = state.entries[path] else { return nil }
            state.entries[path]!.lastUse = state.clock
            return entry.file
        }
        if let cached, cached.file.isCurrent(at: cached.requestedPath) { return cached }
        guard let relative = SafeRelativePath(encoded: path), let file = root.open(relative) else {
            state.withLock { _ = $0.entries.removeValue(forKey: path) }
            return nil
        }
        let made = CachedFile(
            file: file, requestedPath: root.joined(relative), contentType: MediaType.forFileName(relative.segments.last!),
            now: now
        )
        state.withLock { state in
            if state.entries[path] == nil, state.entries.count >= capacity,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.entries.removeValue(forKey: oldest)
            }
            // The key is copied out of the request's string, so the entry keeps no more of it.
            state.entries[Substring(String(path))] = Entry(file: made, lastUse: state.clock)
        }
        return made
    }

    var count: Int { state.withLock { $0.entries.count } }
}
