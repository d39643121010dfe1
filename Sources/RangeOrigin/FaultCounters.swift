import Synchronization

/// Counts requests per exact URL, for `status=CODE&times=N`.
final class FaultCounters: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Records one more request for `url` and returns how many there have been.
    func next(_ url: String) -> Int {
        counts.withLock { counts in
            let count = (counts[url] ?? 0) + 1
            counts[url] = count
            return count
        }
    }
}
