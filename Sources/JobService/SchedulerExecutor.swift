import Dispatch

/// Where the scheduler's actor runs: a serial queue of its own, not the cooperative pool.
///
/// The scheduler calls its store synchronously (`JobRepository`), and a call waits where it
/// runs: for a disk's sync, or up to its deadline on a stalled PostgreSQL. On the cooperative
/// pool (one thread per core, two here) two such waits left no thread for anything else — the
/// API's reads answered from memory, the downloads' tasks, other schedulers in the tests.
/// On a queue of its own a stalled store holds the scheduler's commands only.
final class SchedulerExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
