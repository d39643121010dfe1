import JobService

/// Where the PostgreSQL pool's tasks run (`PostgresClient.run()`, every lease and its
/// statements): threads of their own (`StoreThreads`, which grow while all are busy), never
/// the cooperative pool. Nothing waits on them (every call is awaited), but the pool's own
/// work (connecting, lending, the answers of statements) must not queue behind whatever
/// keeps the cooperative pool's two threads busy: in the whole test suite, PostgreSQL calls
/// then missed their 10 s deadlines with the database idle.
final class StoreExecutor: TaskExecutor {
    static let shared = StoreExecutor()

    private let threads = StoreThreads(limit: 16)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        threads.submit { job.runSynchronously(on: executor) }
    }
}
