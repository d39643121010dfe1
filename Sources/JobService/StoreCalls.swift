/// Where blocking store calls run: threads of their own, never the cooperative pool (whose
/// two or so threads also answer the API) nor NIO's shared pool (which syncs partial files).
/// A stalled store ties up these threads only, each call bounded by its deadline; they grow
/// while all are busy (`StoreThreads`).
public enum StoreCalls {
    static let pool = StoreThreads()

    /// Runs `work` on a store thread with the caller's `StoreCallBudget`. A cancelled task's
    /// call (a pause's last checkpoint) runs there too: it used to run in place, and then
    /// waited on a thread of the cooperative pool.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let budget = StoreCallBudget.current
        return try await withCheckedThrowingContinuation { continuation in
            pool.submit {
                continuation.resume(with: Result { try StoreCallBudget.$current.withValue(budget) { try work() } })
            }
        }
    }
}
