import Synchronization

/// One byte rate shared by every download of the service (`--limit-rate`): each write
/// reserves its slot on a virtual timeline and sleeps until that slot comes.
public final class RateLimiter: Sendable {
    public let bytesPerSecond: Double
    /// Bytes that may pass at once after an idle spell.
    private let burst: Double
    private let next = Mutex<ContinuousClock.Instant?>(nil)

    public init(bytesPerSecond: Int64) {
        self.bytesPerSecond = Double(max(1, bytesPerSecond))
        self.burst = self.bytesPerSecond / 10
    }

    /// Waits until `bytes` more may be sent.
    public func consume(_ bytes: Int) async throws {
        let clock = ContinuousClock()
        let now = clock.now
        let slot = next.withLock { next -> ContinuousClock.Instant in
            // An idle limiter does not bank more than `burst` worth of time.
            let earliest = now - .seconds(burst / bytesPerSecond)
            let start = max(next ?? earliest, earliest)
            next = start + .seconds(Double(bytes) / bytesPerSecond)
            return start
        }
        if slot > now { try await clock.sleep(until: slot) }
    }
}
