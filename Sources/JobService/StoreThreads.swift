public import Foundation

/// Threads for a store's own work (PostgreSQL's pool, `StoreExecutor`) that grow when every
/// one is busy, up to `limit`, and go when idle: work that comes while all are busy still
/// gets a thread. (They once ran blocking store calls, when the store was synchronous; a
/// fixed pool of 8 then left a test's store without a thread while frozen stores of other
/// tests held all 8.)
public final class StoreThreads: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var threads = 0
    private var idle = 0
    private let limit: Int
    private let idleTimeout: TimeInterval

    public init(limit: Int = 64, idleTimeout: TimeInterval = 10) {
        self.limit = limit
        self.idleTimeout = idleTimeout
    }

    /// Threads alive now (for tests).
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    public func submit(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        queue.append(work)
        // Every call waiting has a thread for it: an idle one that will wake, or a new one.
        let spawn = queue.count > idle && threads < limit
        if spawn { threads += 1 }
        condition.signal()
        condition.unlock()
        if spawn {
            let thread = Thread { [self] in self.serve() }
            thread.name = "sluice-store"
            thread.start()
        }
    }

    private func serve() {
        condition.lock()
        while true {
            while queue.isEmpty {
                idle += 1
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleTimeout))
                idle -= 1
                if !signalled, queue.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let work = queue.removeFirst()
            condition.unlock()
            work()
            condition.lock()
        }
    }
}
