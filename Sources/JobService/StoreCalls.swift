import NIOPosix

/// Where blocking store calls run: threads of their own, never the cooperative pool (whose
/// two or so threads also answer the API) nor NIO's shared pool (which syncs partial files).
/// A stalled store ties up these threads only, each call bounded by its deadline.
public enum StoreCalls {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 8)
        pool.start()
        return pool
    }()

    /// Runs `work` on a store thread with the caller's `StoreCallBudget`. A cancelled task (a
    /// pause, a stop) cannot hand work to a pool: its last write runs in place.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        if Task.isCancelled { return try work() }
        let budget = StoreCallBudget.current
        return try await pool.runIfActive { try StoreCallBudget.$current.withValue(budget) { try work() } }
    }
}
