public import Hummingbird
import Logging
import ServiceLifecycle
public import NIOCore
import RangeOrigin

/// Runs a Hummingbird application on 127.0.0.1 with a free port for the duration of `body`.
public func withRunningServer<T: Sendable>(
    router: Router<BasicRequestContext>, host: String = "127.0.0.1", _ body: @Sendable (_ port: Int) async throws -> T
) async throws -> T {
    try await withRunningServer(responder: router.buildResponder(), host: host, body)
}

/// Runs a responder on 127.0.0.1 with a free port for the duration of `body`.
public func withRunningServer<T: Sendable, Responder: HTTPResponder>(
    responder: Responder, host: String = "127.0.0.1",
    channelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
    _ body: @Sendable (_ port: Int) async throws -> T
) async throws -> T where Responder.Context == BasicRequestContext {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "test-server")
    logger.logLevel = .critical
    let app = Application(
        responder: responder,
        server: .http1(configuration: .init(additionalChannelHandlers: channelHandlers())),
        configuration: .init(address: .hostname(host, port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        },
        logger: logger
    )
    // Stopped gracefully, never by cancelling `app.run()`: a cancelled server drops the
    // connections it accepted but has not begun to serve, and NIO traps on each
    // ("Deinited NIOAsyncWriter without calling finish()", swift-nio#3481).
    var configuration = ServiceGroupConfiguration(services: [app], logger: logger)
    configuration.maximumGracefulShutdownDuration = .seconds(10)
    let group = ServiceGroup(configuration: configuration)
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let result: Result<T, any Error>
        if let port = await iterator.next() {
            do { result = .success(try await body(port)) } catch { result = .failure(error) }
        } else {
            result = .failure(CancellationError())
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return try result.get()
    }
}

/// Runs the Range origin alone over `root` on a free port for the duration of `body`,
/// recording what it sends into `recorder` when one is given (then without the event-loop
/// fast path for `/files/`, which answers before any recorder could see the request); `/changing/SIZE` serves a
/// file that changes after some requests (`ChangingFileMiddleware`).
public func withOrigin<T: Sendable>(
    root: String, recorder: RequestRecorder? = nil, host: String = "127.0.0.1",
    _ body: @Sendable (_ port: Int) async throws -> T
) async throws -> T {
    let router = Router()
    let origin = try RangeOrigin(root: root)
    origin.addRoutes(to: router)
    let routes = router.buildResponder()
    let recorded = (recorder ?? RequestRecorder()).recording(routes)
    let changing = ChangingFile()
    return try await withRunningServer(
        responder: CallbackResponder { request, context in
            try await recorded.respond(to: changing.rewrite(request), context: context)
        },
        host: host,
        // The event-loop fast path for files, as the service has it, unless every request
        // must reach the recorder.
        channelHandlers: { recorder.map { [$0.peerLogger()] } ?? [origin.fileFastPath(admits: { _ in true })] },
        body
    )
}
