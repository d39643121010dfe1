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

/// A clock that moves only when the test moves it (`advance(by:)`): a wait on it ends when
/// the test has moved the clock to its deadline, never before. For rules about long times
/// (a `Retry-After` of an hour, a webhook's retries): the test says when that time has come.
public final class ManualClock: Clock, @unchecked Sendable {
    public typealias Instant = FastClock.Instant

    private struct Sleeper {
        var id: UInt64
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var sleepers: [Sleeper] = []
        /// Waits begun whose continuation is not in `sleepers` yet.
        var starting: Set<UInt64> = []
        /// Of those, the ones cancelled meanwhile (each taken when its continuation comes).
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { Instant(offset: state.withLock { $0.now }) }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many waits are under way.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// Cancellations kept for waits whose continuation has not come yet.
    public var keptCancellations: Int { state.withLock { $0.cancelled.count } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            state.starting.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    state.starting.remove(id)
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline.offset <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline.offset, continuation: continuation))
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    // Not waiting yet: its continuation, when it comes, fails. (A wait that
                    // has ended already leaves nothing behind.)
                    if state.starting.contains(id) { state.cancelled.insert(id) }
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration`, ending every wait whose deadline it reaches.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
