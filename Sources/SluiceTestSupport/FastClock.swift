import Synchronization

/// A clock that runs `speed` times faster than real time, and remembers every wait asked
/// of it: time-based rules (backoff, `Retry-After`, stalls) are tested in milliseconds,
/// against real servers, with the durations they asked for checked exactly.
public final class FastClock: Clock, @unchecked Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    public let speed: Int
    private let base = ContinuousClock()
    private let start: ContinuousClock.Instant
    private let waits = Mutex<[Duration]>([])

    public init(speed: Int) {
        self.speed = speed
        self.start = base.now
    }

    public var now: Instant { Instant(offset: (base.now - start) * speed) }
    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let remaining = now.duration(to: deadline)
        waits.withLock { $0.append(remaining) }
        if remaining > .zero { try await base.sleep(for: remaining / speed) }
    }

    /// Every wait asked for, in the order asked.
    public var requestedWaits: [Duration] { waits.withLock { $0 } }
}
