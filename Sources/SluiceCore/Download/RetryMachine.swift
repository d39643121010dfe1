/// What a download (or one of its connections) does after each thing that happens to it:
/// the decisions that used to be spread over three retry loops and the errors they threw,
/// in one pure value. The engine feeds it events and carries out its actions; waiting is
/// the engine's, on the clock it was given, so tests of backoff and `Retry-After` run
/// instantly.
public struct RetryMachine: Sendable, Equatable {
    public enum Event: Sendable, Equatable {
        /// Bytes reached the disk at a useful rate: failures so far are forgiven.
        case progressed
        /// A failure worth retrying (a reset, a timeout, 408, 429, 5xx, a malformed answer).
        case transient(SluiceError, retryAfter: Double?)
        /// The connection went silent or slower than the floor. It is replaced, and it
        /// counts as a failure that the few bytes it brought do not forgive.
        case stalled(SluiceError)
        /// A failure that will not get better (404, a refused target, a full disk).
        case final(SluiceError)
        /// The remote file is not the one on disk.
        case remoteChanged(String)
        /// The user paused or deleted, or the service is stopping.
        case cancelled
    }

    public enum Action: Sendable, Equatable {
        /// Go on.
        case proceed
        /// Wait this long, then try again.
        case retry(after: Duration)
        /// Discard what is on disk and start over from byte 0.
        case restartFromZero(reason: String)
        /// Give up with this error.
        case fail(SluiceError)
        /// Stop without an error, after a checkpoint.
        case stop
        /// The file is whole and verified: move it into place.
        case place
    }

    /// Starting over more often than this means the remote never holds still.
    public static let maximumRestarts = 5

    public let policy: RetryPolicy
    public private(set) var consecutiveFailures = 0
    public private(set) var restarts = 0

    public init(policy: RetryPolicy, failures: Int = 0) {
        self.policy = policy
        self.consecutiveFailures = max(0, failures)
    }

    /// The action for `event`; `jitter` is a random value in 0...1 for the backoff.
    public mutating func handle(_ event: Event, jitter: Double) -> Action {
        switch event {
        case .progressed:
            consecutiveFailures = 0
            return .proceed
        case .transient(let error, let retryAfter):
            return failed(error, retryAfter: retryAfter, jitter: jitter)
        case .stalled(let error):
            return failed(error, retryAfter: nil, jitter: jitter)
        case .final(let error):
            return .fail(error)
        case .remoteChanged(let reason):
            restarts += 1
            consecutiveFailures = 0
            guard restarts <= Self.maximumRestarts else {
                return .fail(SluiceError(.remoteChanged, "the remote file kept changing: \(reason)"))
            }
            return .restartFromZero(reason: reason)
        case .cancelled:
            return .stop
        }
    }

    /// The event a response head's verdict (from `ResponseCheck`) is, or nil when its body
    /// may be written.
    public static func event(for verdict: ResponseCheck.Verdict, status: Int) -> Event? {
        switch verdict {
        case .accept:
            return nil
        case .restart(let reason):
            return .remoteChanged(reason)
        case .transient(let retryAfter):
            return .transient(SluiceError(.httpStatus, "the server answered HTTP \(status)"), retryAfter: retryAfter)
        case .fatal(let status):
            return .final(SluiceError(.httpStatus, "the server answered HTTP \(status)"))
        case .invalid(let message):
            // Never written, never recombined (C2): asked again.
            return .transient(SluiceError(.invalidResponse, message), retryAfter: nil)
        }
    }

    /// The event a failed probe (or continuation) answer is.
    public static func event(for failure: ResponseCheck.ProbeFailure, status: Int) -> Event {
        switch failure {
        case .transient(let retryAfter):
            return .transient(SluiceError(.httpStatus, "the server answered HTTP \(status)"), retryAfter: retryAfter)
        case .fatal, .emptyRange:
            return .final(SluiceError(.httpStatus, "the server answered HTTP \(status)"))
        case .invalid(let message):
            return .transient(SluiceError(.invalidResponse, message), retryAfter: nil)
        }
    }

    /// The whole file's digest is known: place it, or fail when it is not the one asked for.
    /// `digest`, of `expected`'s algorithm, against it.
    public static func verified(digest: String, expected: Checksum?) -> Action {
        if let expected, expected.hex != digest {
            return .fail(SluiceError(.checksumMismatch, "\(expected.algorithm.displayName) is \(digest), expected \(expected.hex)"))
        }
        return .place
    }

    private mutating func failed(_ error: SluiceError, retryAfter: Double?, jitter: Double) -> Action {
        consecutiveFailures += 1
        guard consecutiveFailures < policy.maximumFailures else { return .fail(error) }
        let seconds = policy.delay(afterFailures: consecutiveFailures, retryAfter: retryAfter, jitter: jitter)
        return .retry(after: .milliseconds(Int64((seconds * 1000).rounded())))
    }
}

/// Whether one connection is still worth keeping: it is stalled when, over a whole
/// `window`, it brought less than `floor` bytes per second (a remote trickling a byte every
/// 29 s never trips the 30 s read timeout, which catches silence). Pure: the connection's
/// bytes and the time since it started in, a verdict out.
public struct StallWatch: Sendable, Equatable {
    public let window: Duration
    public let floor: Int64
    private var windowStart: Duration = .zero
    private var bytesInWindow: Int64 = 0

    /// 1 KiB/s over 30 s, as the issue that asked for it says.
    public init(window: Duration = .seconds(30), floor: Int64 = 1024) {
        self.window = window
        self.floor = floor
    }

    /// Records `count` bytes received `elapsed` after the connection started; returns why
    /// the connection is stalled, or nil while it is fine.
    public mutating func received(_ count: Int, at elapsed: Duration) -> String? {
        let floor = self.floor
        return received(count, at: elapsed, floor: floor)
    }

    /// The same, with the floor as it is now (a rate limit can change while a connection
    /// runs): read only when a window closes, not for every buffer.
    public mutating func received(_ count: Int, at elapsed: Duration, floor: @autoclosure () -> Int64) -> String? {
        bytesInWindow += Int64(count)
        let span = elapsed - windowStart
        guard span >= window else { return nil }
        let floor = floor()
        guard floor > 0 else { return nil }
        let seconds = Double(span.components.seconds) + Double(span.components.attoseconds) / 1e18
        if Double(bytesInWindow) < Double(floor) * seconds {
            return "the connection brought \(bytesInWindow) bytes in \(Int(seconds)) s, under \(floor) bytes/s"
        }
        windowStart = elapsed
        bytesInWindow = 0
        return nil
    }
}
