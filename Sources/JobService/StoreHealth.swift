import Dispatch
import Foundation
public import ServiceLifecycle
import Synchronization

/// What the service last saw of its job store, for `/healthz` to answer at once: a service
/// of its own asks the store for the cheapest round trip every `interval`, and the store is
/// unavailable once a round trip has gone unanswered, or round trips have failed, for
/// `threshold` (a stalled call holds that task, never a request). With the defaults, a store that stops answering is reported
/// within about 8 s, one that comes back within `interval` of its first answer.
public final class StoreHealth: Service, CustomStringConvertible {
    public var description: String { "StoreHealth" }
    private let repository: any JobRepository
    private let interval: Duration
    private let threshold: Duration
    /// `DispatchTime` uptime nanoseconds since when the store has not answered: when the
    /// round trip under way began, or when the first of the failures since its last answer
    /// began; 0 while it answers. A loop that is late to ask (its tasks waiting for a thread
    /// on a loaded machine) is not a store that does not answer: CI's busiest pass saw
    /// writes refused 503 on a healthy SQLite when the silence counted from the last answer.
    private let silentSince = Atomic<UInt64>(0)
    /// Not asked yet (a service built but not run, as in-process tests do): assumed to answer.
    private let started = Atomic<Bool>(false)

    public init(repository: any JobRepository, interval: Duration = .seconds(2), threshold: Duration = .seconds(6)) {
        self.repository = repository
        self.interval = interval
        self.threshold = threshold
    }

    /// Whether the store answered recently enough.
    public var isAvailable: Bool {
        guard started.load(ordering: .relaxed) else { return true }
        let since = silentSince.load(ordering: .relaxed)
        guard since != 0 else { return true }
        let silent = DispatchTime.now().uptimeNanoseconds &- since
        return Int64(bitPattern: silent) < Self.nanoseconds(threshold)
    }

    /// Asks the store until the service group shuts down (or the task is cancelled). A ping
    /// the store does not answer waits (holding no thread) until its deadline; meanwhile the
    /// silence grows. First in the group, last to stop: the scheduler's shutdown reads it.
    public func run() async throws {
        silentSince.store(0, ordering: .relaxed)
        started.store(true, ordering: .relaxed)
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                // The silence starts with this round trip, unless it goes on from failed ones.
                _ = silentSince.compareExchange(expected: 0, desired: DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
                if (try? await repository.ping()) != nil {
                    silentSince.store(0, ordering: .relaxed)
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
