public import Foundation

/// Time as the engine and the job service use it: how long since it started, the date now,
/// and a way to wait. Made from any Swift `Clock` — the continuous clock in service, a
/// faster or a manual one in tests — so that rules about time (backoff, `Retry-After`, a
/// parked job's `retryAt`, stalls, webhook retries) are tested without waiting for real.
///
/// Bounds on real waits (a pause waiting for its run, a store call's budget, a lease) stay
/// on real time: they limit how long real I/O may take, whatever the rules' clock says.
public struct ElapsedClock: Sendable {
    public let elapsed: @Sendable () -> Duration
    public let sleep: @Sendable (Duration) async throws -> Void
    /// The date now: the wall clock in service; on another clock, the date it was made at
    /// plus the time that clock has moved since.
    public let now: @Sendable () -> Date

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        let startDate = Date()
        let elapsed: @Sendable () -> Duration = { start.duration(to: clock.now) }
        self.elapsed = elapsed
        sleep = { duration in try await clock.sleep(for: duration) }
        now = { startDate.addingTimeInterval(elapsed() / .seconds(1)) }
    }

    /// A clock of parts: a test's wall clock that it sets or steps, say.
    public init(
        elapsed: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void,
        now: @escaping @Sendable () -> Date
    ) {
        self.elapsed = elapsed
        self.sleep = sleep
        self.now = now
    }

    private init(continuous clock: ContinuousClock) {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { duration in try await clock.sleep(for: duration) }
        now = { Date() }
    }

    public static var continuous: ElapsedClock { ElapsedClock(continuous: ContinuousClock()) }

    /// Sleeps until `date` on this clock (at once if it has passed).
    public func sleep(until date: Date) async throws {
        let seconds = date.timeIntervalSince(now())
        if seconds > 0 { try await sleep(.seconds(seconds)) }
    }
}
