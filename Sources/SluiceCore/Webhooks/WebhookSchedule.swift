public import Foundation

/// When a webhook delivery that failed is tried again: exponential backoff with jitter, from
/// `base` doubling up to `cap`, for up to `retryFor` after the delivery was made; the last
/// try falls at that limit. A pure value: the dispatcher asks it, tests give it times.
public struct WebhookSchedule: Sendable, Equatable {
    public var retryFor: TimeInterval
    public var base: TimeInterval
    public var cap: TimeInterval

    public init(retryFor: TimeInterval = 24 * 3600, base: TimeInterval = 5, cap: TimeInterval = 3600) {
        self.retryFor = retryFor
        self.base = base
        self.cap = cap
    }

    /// After `attempts` failed attempts (1 or more) of a delivery made at `createdAt`, when
    /// to try next, or nil to give up. `jitter` in 0..<1 spreads a wait over its upper half
    /// ("equal jitter"), so receivers that failed together are not retried together.
    public func nextAttempt(attempts: Int, createdAt: Date, now: Date, jitter: Double) -> Date? {
        let deadline = createdAt.addingTimeInterval(retryFor)
        guard now < deadline else { return nil }
        let exponent = Double(min(max(attempts - 1, 0), 40))
        let wait = min(cap, base * pow(2, exponent))
        let jittered = wait * (0.5 + 0.5 * min(max(jitter, 0), 1))
        return min(now.addingTimeInterval(jittered), deadline)
    }
}
