public import SluiceCore
import Synchronization

/// A byte rate: each write reserves its slot on a timeline and sleeps until that slot
/// comes, on the clock it was given (tests pass a faster one). The queue's limit is one
/// shared by every download; a job's own limit is another whose `parent` is the queue's,
/// so a job never goes faster than either. The rate can change while downloads run
/// (`PATCH /queue`, `PATCH /jobs/ID`); nil lets everything through.
public final class RateLimiter: Sendable {
    private struct Timeline {
        var bytesPerSecond: Double?
        /// When the next byte may go, as time since the clock started.
        var next: Duration?
        /// Counts rate changes: a wait reserved under an older rate is reserved again.
        var generation = 0
    }

    /// The longest single sleep: a wait reserved under a slow rate notices a new rate
    /// within this much.
    static let longestSleep: Duration = .milliseconds(250)

    private let clock: ElapsedClock
    private let timeline: Mutex<Timeline>
    public let parent: RateLimiter?

    public init(bytesPerSecond: Int64?, clock: ElapsedClock = .continuous, parent: RateLimiter? = nil) {
        self.timeline = Mutex(Timeline(bytesPerSecond: bytesPerSecond.map { Double(max(1, $0)) }))
        self.clock = clock
        self.parent = parent
    }

    /// The rate now, nil when unlimited.
    public var bytesPerSecond: Double? { timeline.withLock { $0.bytesPerSecond } }

    /// The lowest rate that applies, this limiter's or a parent's; nil when none does.
    public var effectiveBytesPerSecond: Double? {
        switch (bytesPerSecond, parent?.effectiveBytesPerSecond) {
        case (let own?, let inherited?): min(own, inherited)
        case (let own, let inherited): own ?? inherited
        }
    }

    /// A new rate for the bytes from now on; nil for none. Writers waiting under the old
    /// rate reserve their slot again under the new one.
    public func setRate(_ bytesPerSecond: Int64?) {
        timeline.withLock {
            $0.bytesPerSecond = bytesPerSecond.map { Double(max(1, $0)) }
            $0.next = nil
            $0.generation &+= 1
        }
    }

    /// Waits until `bytes` more may be sent, here and in every parent.
    public func consume(_ bytes: Int) async throws {
        reserve: while true {
            var now = clock.elapsed()
            let (slot, generation) = timeline.withLock { timeline -> (Duration?, Int) in
                guard let rate = timeline.bytesPerSecond else { return (nil, timeline.generation) }
                // An idle limiter does not bank more than a tenth of a second's worth.
                let earliest = now - .seconds(0.1)
                let start = max(timeline.next ?? earliest, earliest)
                timeline.next = start + .seconds(Double(bytes) / rate)
                return (start, timeline.generation)
            }
            guard let slot else { break }
            while slot > now {
                try await clock.sleep(min(slot - now, Self.longestSleep))
                if timeline.withLock({ $0.generation }) != generation { continue reserve }
                now = clock.elapsed()
            }
            break
        }
        try await parent?.consume(bytes)
    }
}
