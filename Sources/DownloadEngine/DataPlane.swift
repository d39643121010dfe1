import NIOCore
public import NIOPosix
import SluiceSystem
import Synchronization

/// The threads that move download bytes, apart from the Swift cooperative pool that
/// answers the API.
///
/// Each download runs with a task-executor preference for one of these event loops, and
/// AsyncHTTPClient opens its connections on the loop the request is made from
/// (`EventLoopGroup.any()` is the current loop when called on one). So a body buffer is
/// read, handed to the worker and `pwrite`n at its offset on one thread, with no hop per
/// buffer, while API requests never queue behind it on the cooperative pool's two threads.
public enum DataPlane {
    /// One event loop per core, shared by every download of the process and by the
    /// fetcher's HTTP clients. Lives as long as the process, like NIO's singletons.
    public static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)

    private static let executors: [EventLoopExecutor] = eventLoopGroup.makeIterator().map(EventLoopExecutor.init)
    private static let turn = Atomic<UInt>(0)

    /// Where downloads hash what they wrote: threads of their own, so the shared pool stays
    /// free for `fsync`s and store writes, and so they can yield like the loops.
    static let hashingPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: System.coreCount)
        pool.start()
        return pool
    }()

    /// The nice value the data plane's threads take (0: as the process).
    private static let niceness = Atomic<Int32>(0)

    /// Gives the data plane a lower scheduling priority than the rest of the process (the
    /// API's event loops and the cooperative pool), `nice` +`niceness` on Linux: downloads
    /// still take every cycle nobody else wants, but an API request no longer waits for a
    /// time slice behind them. `sluice serve` does this; `sluice get`, with no API to keep
    /// responsive, does not.
    public static func yieldToControlPlane(niceness value: Int32 = 10) {
        niceness.store(value, ordering: .relaxed)
        for loop in eventLoopGroup.makeIterator() {
            loop.execute { adoptPriority() }
        }
    }

    /// Applies the data plane's nice value to the calling thread (on Linux, `setpriority`
    /// with `PRIO_PROCESS` and 0 sets the calling thread's only). Cheap and idempotent: the
    /// hashing pool calls it before each piece of work.
    static func adoptPriority() {
        let value = niceness.load(ordering: .relaxed)
        guard value != 0 else { return }
        ThreadPriority.setCurrentThreadNice(value)
    }

    /// The next loop's executor, round robin: a download's connections spread over the cores.
    public static func nextExecutor() -> any TaskExecutor {
        let index = turn.add(1, ordering: .relaxed).oldValue
        return executors[Int(index % UInt(executors.count))]
    }
}

/// Runs the jobs of the tasks that prefer it on one NIO event loop.
final class EventLoopExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
