/// When to try again after a transient failure (docs/downloads.md, "Retries"): exponential
/// backoff from `base` doubling to `maximum`, with jitter, at least any `Retry-After`; and give
/// up after `maximumFailures` consecutive failures without progress.
public struct RetryPolicy: Sendable, Equatable {
    public var base: Double
    public var maximum: Double
    public var maximumFailures: Int

    public init(base: Double = 1, maximum: Double = 60, maximumFailures: Int = 5) {
        self.base = base
        self.maximum = maximum
        self.maximumFailures = maximumFailures
    }

    /// The longest `Retry-After` honoured, in seconds: a remote asking for an hour gets ten
    /// minutes, so it cannot park a download for longer.
    public static let longestRetryAfter: Double = 600

    /// The wait before attempt `failures + 1`, in seconds. `jitter` is a random value in
    /// 0...1 supplied by the caller; the wait is between half and all of the backoff step
    /// ("equal jitter"), never below `retryAfter` (itself capped at ten minutes).
    public func delay(afterFailures failures: Int, retryAfter: Double? = nil, jitter: Double) -> Double {
        let exponent = Double(max(0, failures - 1))
        let step = min(maximum, base * pow2(exponent))
        let jittered = step / 2 + step / 2 * min(1, max(0, jitter))
        return max(jittered, min(retryAfter ?? 0, Self.longestRetryAfter))
    }

    private func pow2(_ exponent: Double) -> Double {
        exponent >= 63 ? .infinity : Double(UInt64(1) << UInt64(exponent))
    }
}

/// How an HTTP status on a download request is treated.
public enum StatusDisposition: Equatable, Sendable {
    case success
    /// 408, 429, 5xx: retry with backoff.
    case transient
    /// Any other 4xx (and unexpected 1xx/3xx): fail at once with `http_status`.
    case fatal

    public init(status: Int) {
        switch status {
        case 200..<300: self = .success
        case 408, 429, 500..<600: self = .transient
        default: self = .fatal
        }
    }
}
