import Synchronization

/// Counts requests per exact URL, for `status=CODE&times=N`. Bounded: past `capacity` URLs
/// the least recently seen is forgotten (and would count from 1 again), so no sequence of
/// requests — unique query strings, say — grows memory without limit.
final class FaultCounters: Sendable {
    static let defaultCapacity = 4096
    private let state: Mutex<State>

    init(capacity: Int = FaultCounters.defaultCapacity) {
        state = Mutex(State(capacity: max(1, capacity)))
    }

    /// Records one more request for `url` and returns how many there have been.
    func next(_ url: String) -> Int {
        state.withLock { $0.next(url) }
    }

    /// How many URLs are remembered.
    var count: Int { state.withLock { $0.counts.count } }

    private struct State: ~Copyable {
        let capacity: Int
        var counts: [String: (count: Int, lastSeen: UInt64)] = [:]
        var tick: UInt64 = 0

        init(capacity: Int) { self.capacity = capacity }

        mutating func next(_ url: String) -> Int {
            tick += 1
            if let entry = counts[url] {
                counts[url] = (entry.count + 1, tick)
                return entry.count + 1
            }
            if counts.count >= capacity { evictOldest() }
            counts[url] = (1, tick)
            return 1
        }

        /// Drops the older half at once, so eviction costs O(1) per request on average.
        private mutating func evictOldest() {
            let ordered = counts.sorted { $0.value.lastSeen < $1.value.lastSeen }
            for (url, _) in ordered.prefix(max(1, capacity / 2)) { counts[url] = nil }
        }
    }
}
