public import SluiceCore
import Synchronization

/// One byte rate shared by every download of the service (`--limit-rate`): each write
/// reserves its slot on a timeline and sleeps until that slot comes, on the clock it was
/// given (tests pass a faster one).
public final class RateLimiter: Sendable {
    public let bytesPerSecond: Double
    /// Bytes that may pass at once after an idle spell.
    private let burst: Double
    private let clock: ElapsedClock
    /// When the next byte may go, as time since the clock started.
    private let next = Mutex<Duration?>(nil)

    public init(bytesPerSecond: Int64, clock: ElapsedClock = .continuous) {
        self.bytesPerSecond = Double(max(1, bytesPerSecond))
        self.burst = self.bytesPerSecond / 10
        self.clock = clock
    }

    /// Waits until `bytes` more may be sent.
    public func consume(_ bytes: Int) async throws {
        let now = clock.elapsed()
        let slot = next.withLock { next -> Duration in
            // An idle limiter does not bank more than `burst` worth of time.
            let earliest = now - .seconds(burst / bytesPerSecond)
            let start = max(next ?? earliest, earliest)
            next = start + .seconds(Double(bytes) / bytesPerSecond)
            return start
        }
        if slot > now { try await clock.sleep(slot - now) }
    }
}
