/// Time as the engine uses it: how long since it started, and a way to wait. Made from any
/// Swift `Clock` — the continuous clock in service, a faster one in tests — so that rules
/// about time (backoff, `Retry-After`, stalls) are tested without waiting for real.
public struct ElapsedClock: Sendable {
    public let elapsed: @Sendable () -> Duration
    public let sleep: @Sendable (Duration) async throws -> Void

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { duration in try await clock.sleep(for: duration) }
    }

    public static var continuous: ElapsedClock { ElapsedClock(ContinuousClock()) }
}
