import Dispatch

/// Where the PostgreSQL pool's tasks run (`PostgresClient.run()` and every lease): threads of
/// a queue of their own, never the cooperative pool. The store is called synchronously, from
/// threads that wait for a lease (a store thread, the scheduler's, at start the main task on
/// the pool itself); a lease that needed a pool thread to run could wait for the very
/// thread that waits for it.
final class StoreExecutor: TaskExecutor {
    static let shared = StoreExecutor()

    private let queue = DispatchQueue(label: "sluice.postgres", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
