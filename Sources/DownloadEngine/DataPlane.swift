import NIOCore
public import NIOPosix
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
