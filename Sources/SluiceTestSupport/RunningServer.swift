import Hummingbird
import Logging
import NIOCore
import RangeOrigin

/// Runs a Hummingbird application on 127.0.0.1 with a free port for the duration of `body`.
public func withRunningServer<T: Sendable>(
    router: Router<BasicRequestContext>, _ body: @Sendable (_ port: Int) async throws -> T
) async throws -> T {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "test-server")
    logger.logLevel = .critical
    let app = Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        },
        logger: logger
    )
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try await app.run()
            return nil
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        defer { group.cancelAll() }
        return try await body(port)
    }
}

/// Runs the Range origin alone over `root` on a free port for the duration of `body`.
public func withOrigin<T: Sendable>(root: String, _ body: @Sendable (_ port: Int) async throws -> T) async throws -> T {
    let router = Router()
    try RangeOrigin(root: root).addRoutes(to: router)
    return try await withRunningServer(router: router, body)
}
