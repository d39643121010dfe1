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

/// A clock whose time moves only when something sleeps on it: every wait returns at once,
/// having moved the clock to its deadline. Rates and backoffs come out exact: the time the
/// clock shows at the end is the time the waits would have taken.
public final class VirtualClock: Clock, @unchecked Sendable {
    public typealias Instant = FastClock.Instant

    private let state = Mutex<(now: Duration, waits: [Duration])>((.zero, []))

    public init() {}

    public var now: Instant { Instant(offset: state.withLock { $0.now }) }
    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.waits.append(deadline.offset - state.now)
            state.now = max(state.now, deadline.offset)
        }
        await Task.yield()
    }

    /// Every wait asked for, in the order asked.
    public var requestedWaits: [Duration] { state.withLock { $0.waits } }
}
