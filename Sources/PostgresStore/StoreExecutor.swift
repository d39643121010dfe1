import JobService

/// Where the PostgreSQL pool's tasks run (`PostgresClient.run()` and every lease): threads
/// of their own (`StoreThreads`, which grow while all are busy), never the cooperative pool.
/// The store is called synchronously, from threads that wait for a lease (a store thread,
/// the scheduler's, at start the main task on the pool itself); a lease that needed a pool
/// thread to run could wait for the very thread that waits for it (every PostgreSQL suite of
/// the test process hung that way).
final class StoreExecutor: TaskExecutor {
    static let shared = StoreExecutor()

    private let threads = StoreThreads(limit: 16)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        threads.submit { job.runSynchronously(on: executor) }
    }
}
