/// How `aria2.shutdown` and `aria2.forceShutdown` stop the service when
/// `--rpc-allow-shutdown` lets them: they ask here, after answering, and whoever runs the
/// service (its `ServiceGroup`) begins the same graceful shutdown as SIGTERM's. Asking
/// twice is asking once.
public struct RPCShutdown: Sendable {
    /// One element per request, the newest kept: a single reader waits on it.
    public let requests: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    public init() {
        (requests, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func request() {
        continuation.yield()
    }
}
