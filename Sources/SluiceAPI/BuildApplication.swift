import Foundation
public import Hummingbird
public import Logging
import RangeOrigin
import SluiceCore

/// The request context of every Sluice route.
public typealias SluiceRequestContext = BasicRequestContext

/// Composes the service: creates the data directories, then builds the router and the
/// application. `onListening` receives the URL once the socket is bound.
public func buildApplication(
    configuration: ServiceConfiguration, logger: Logger,
    onListening: @escaping @Sendable (String) async -> Void = { _ in }
) throws -> some ApplicationProtocol {
    for directory in [configuration.dataDirectory, configuration.cacheDirectory, configuration.documentsDirectory, configuration.originRoot] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    let router = try buildRouter(configuration: configuration)
    let host = configuration.host
    return Application(
        router: router,
        configuration: .init(address: .hostname(host, port: configuration.port), serverName: "sluice"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let shownHost = host.contains(":") ? "[\(host)]" : host
            await onListening("http://\(shownHost):\(port)")
        },
        logger: logger
    )
}

/// The routes of the service.
public func buildRouter(configuration: ServiceConfiguration) throws -> Router<SluiceRequestContext> {
    let router = Router(context: SluiceRequestContext.self)
    router.get("/healthz") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"status":"ok"}"#))
        )
    }
    try RangeOrigin(root: configuration.originRoot).addRoutes(to: router)
    return router
}
