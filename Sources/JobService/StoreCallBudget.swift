import Synchronization

/// How long a request may spend waiting on its job store, its store calls and the wait for
/// the service to take it up included: a stalled store answers 503 `store_unavailable` within
/// it, not after the store's own timeout, and a command queued behind another's store call
/// gets no budget of its own on top. A wait for something else (a run to checkpoint, a
/// remote's probe) renews it. Tasks a request starts for the service (a download's run) set
/// it aside.
public final class StoreCallBudget: Sendable {
    /// The running request's budget (`StoreCallBudget.$current.withValue`); nil for the
    /// store's own timeouts.
    @TaskLocal public static var current: StoreCallBudget?

    /// What a request to the API may spend on the store, from its arrival: 2 s
    /// (docs/job-service.md, "Store calls"). The service's `storeBudget` is this unless a test
    /// pass sets another.
    public static let request: Duration = .seconds(2)

    private let length: Duration
    private let deadline: Mutex<ContinuousClock.Instant>

    public init(_ length: Duration) {
        self.length = length
        deadline = Mutex(.now + length)
    }

    /// What is left of the current budget now (zero once spent); nil without one.
    public static var remaining: Duration? {
        current.map { budget in max(.zero, budget.deadline.withLock { $0 } - ContinuousClock.now) }
    }

    /// Runs `body` under the current budget, or under a new one of `length` (the service's
    /// `storeBudget`) when none is set: the service's own work (a run's end, a read back)
    /// waits on the store no longer than a command may.
    public static func bounded<T>(
        _ length: Duration, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        try await $current.withValue(current ?? StoreCallBudget(length), operation: body, isolation: isolation)
    }

    /// A full budget again, after a wait that was not the store's.
    public static func renew() {
        guard let budget = current else { return }
        budget.deadline.withLock { $0 = .now + budget.length }
    }
}
