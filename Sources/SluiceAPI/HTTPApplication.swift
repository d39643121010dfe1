import Foundation
public import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdWebSocket
import NIOCore
import PublicFiles
public import JobService
public import Logging
public import Prometheus
public import RangeOrigin
public import ServiceLifecycle
import SluiceCore
import SluiceHTTP

/// What the service calls itself in `Server`.
let serverName = "sluice"

/// The HTTP server of the service: its connection limits and deadlines and the origin's
/// event-loop fast path ahead of `routes`. `onListening` receives the URL once the socket
/// is bound.
/// With `certificate`, every route is served over TLS (HTTP/2 or HTTP/1.1 by ALPN) and the
/// URL is `https://`; the origin's `sendfile` fast path is for plain connections only.
public func buildApplication(
    configuration: APIConfiguration, routes: RouterResponder<SluiceRequestContext>, origin: RangeOrigin,
    metrics: PrometheusMetricsFactory, logger: Logger, certificate: ServerCertificate? = nil, storeHealth: StoreHealth? = nil,
    aria2: Aria2Service? = nil, onListening: @escaping @Sendable (String) async -> Void = { _ in }
) throws -> some Service {
    let admission = OriginAdmission(allowedHosts: configuration.hostCheck, token: try configuration.tokenDigest())
    let host = configuration.host
    let deadlines = { @Sendable in
        ConnectionDeadlineHandler(
            headTimeout: .init(configuration.requestHeadTimeout), bodyTimeout: .init(configuration.requestBodyTimeout),
            idleTimeout: .init(configuration.idleTimeout))
    }
    // `/healthz` on the event loop, when the service watches a store.
    let health = { @Sendable () -> [any RemovableChannelHandler] in
        storeHealth.map { [HealthFastPathHandler(health: $0, admits: admission.admitsWithoutToken)] } ?? []
    }
    let webSocket = aria2?.webSocket
    let headTimeout = TimeAmount(configuration.requestHeadTimeout)
    // HTTP/1.1 that also upgrades `/jsonrpc` to aria2's WebSocket. The upgrade parses the
    // first head before `deadlines()` is in place: that head is timed in bytes, at the front
    // of what the channel sets up.
    let upgrading = {
        @Sendable (http1: HTTP1Channel.Configuration, responder: @escaping HTTPChannelHandler.Responder, socket: JSONRPCWebSocket) in
        FirstHeadDeadlineChannel(
            inner: HTTP1WebSocketUpgradeChannel(
                responder: responder,
                configuration: .init(http1: http1, ws: .init(maxFrameSize: JSONRPCWebSocket.maximumMessageSize)),
                shouldUpgrade: { request, _, _ in socket.shouldUpgrade(request) }
            ),
            headTimeout: headTimeout
        )
    }
    let server: HTTPServerBuilder
    if let certificate {
        let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [deadlines()] + health())
        // Each stream's request is timed as an HTTP/1 connection's is (its body above all);
        // the connection itself by `HTTP2IdleDeadlineHandler` (in `TLSHTTPChannel`).
        let http2 = HTTP2Channel.Configuration(
            idleTimeout: configuration.idleTimeout,
            streamConfiguration: .init(additionalChannelHandlers: [HTTP2StreamCounter(), deadlines()] + health())
        )
        let http2Deadline = { @Sendable in
            HTTP2IdleDeadlineHandler(
                firstStreamTimeout: headTimeout, idleTimeout: .init(configuration.idleTimeout + configuration.requestHeadTimeout))
        }
        // `wss://…/jsonrpc` over HTTP/1.1; HTTP/2 has no upgrade (a WebSocket client asks
        // for `http/1.1` by ALPN, or for nothing).
        server = HTTPServerBuilder { responder -> any ServerChildChannel in
            let h2 = HTTP2Channel(responder: responder, configuration: http2)
            if let webSocket {
                return TLSHTTPChannel(
                    certificate: certificate, handshakeTimeout: headTimeout, http1: upgrading(http1, responder, webSocket), http2: h2,
                    http2Deadline: http2Deadline
                )
            }
            return TLSHTTPChannel(
                certificate: certificate, handshakeTimeout: headTimeout, http1: HTTP1Channel(responder: responder, configuration: http1),
                http2: h2, http2Deadline: http2Deadline
            )
        }
    } else {
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [deadlines()] + health() + [
                origin.fileFastPath(
                    admits: admission.admits, extraHeaders: [.server: serverName],
                    answered: RequestTimers(factory: metrics).recorder(method: .get, route: "/files/**")
                )
            ]
        )
        if let webSocket {
            server = HTTPServerBuilder { responder in upgrading(http1, responder, webSocket) }
        } else {
            server = .http1(configuration: http1)
        }
    }
    let scheme = certificate == nil ? "http" : "https"
    return Application(
        responder: routes,
        server: server,
        configuration: .init(
            address: .hostname(host, port: configuration.port), serverName: serverName,
            availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections, logger: logger)
        ),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let shownHost = host.contains(":") ? "[\(host)]" : host
            await onListening("\(scheme)://\(shownHost):\(port)")
        },
        logger: logger
    )
}

/// The routes of the service. Middleware order: metrics see every answer; errors become
/// JSON bodies; security headers; the browser guard (Host, Origin) before the token check,
/// which decides on the route the router chose.
public func buildRouter(
    configuration: APIConfiguration, jobs: any JobService, origin: RangeOrigin,
    registry: PrometheusCollectorRegistry, metrics: PrometheusMetricsFactory, logger: Logger, storeHealth: StoreHealth? = nil,
    tokens: TokenRegistry? = nil, aria2: Aria2Service? = nil
) throws -> Router<SluiceRequestContext> {
    let tokens = try tokens ?? TokenRegistry(master: configuration.tokenDigest(), store: nil)
    let router = Router(context: SluiceRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: RequestMetricsMiddleware(timers: RequestTimers(factory: metrics)))
    router.add(middleware: ErrorBodyMiddleware(logger: logger))
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(
        middleware: BrowserGuardMiddleware(
            allowedHosts: configuration.hostCheck, crossOrigin: CrossOriginPolicy(configuration.allowedOrigins)))
    if tokens.isEnforced {
        router.add(middleware: BearerAuthMiddleware(tokens: tokens))
    }
    router.add(middleware: StoreAccessMiddleware(health: storeHealth, budget: configuration.storeBudget))
    // Answered at once from what the service last saw of its store: a readiness probe
    // takes a node whose store stopped answering out of rotation.
    router.get("/healthz") { _, _ in
        let available = storeHealth?.isAvailable ?? true
        return Response(
            status: available ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
            body: ResponseBody(
                byteBuffer: ByteBuffer(string: available ? #"{"status":"ok"}"# : #"{"status":"degraded","store":"unavailable"}"#)
            )
        )
    }
    router.allowOnly([.get], at: "/healthz")
    for path in ["/files/**", "/testdata/:size"] {
        router.allowOnly([.get], at: RouterPath(stringLiteral: path))
    }
    JobsController(jobs: jobs).addRoutes(to: router)
    QueueController(jobs: jobs).addRoutes(to: router)
    ScheduleController(jobs: jobs).addRoutes(to: router)
    EventsController(jobs: jobs, tokens: tokens).addRoutes(to: router)
    TokensController(tokens: tokens).addRoutes(to: router)
    let aria2 = aria2 ?? Aria2Service(jobs: jobs, configuration: configuration, tokens: tokens)
    JSONRPCController(methods: aria2.methods, crossOrigin: aria2.crossOrigin).addRoutes(to: router)
    MetricsController(registry: registry, factory: metrics, jobs: jobs).addRoutes(to: router)
    origin.addRoutes(to: router)
    // The dashboard and the spec: `--public DIR` when given (development), else the copy
    // compiled into the binary.
    let embedded = configuration.publicDirectory == nil ? EmbeddedFileProvider(files: EmbeddedPublic.files) : nil
    let readSpec: @Sendable () -> Data? =
        if let publicDirectory = configuration.publicDirectory {
            { FileManager.default.contents(atPath: publicDirectory + "/openapi.yaml") }
        } else {
            { EmbeddedPublic.files["/openapi.yaml"] }
        }
    router.get("/openapi.yaml") { _, _ in
        guard let data = readSpec() else { throw SluiceError(.notFound, "this service has no openapi.yaml") }
        return Response(
            status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }
    router.allowOnly([.get], at: "/openapi.yaml")
    // Last, so that they apply only to paths no route matched: the dashboard's files.
    if let embedded {
        router.add(middleware: StaticFilesMethodMiddleware(paths: embedded.paths))
        router.add(middleware: FileMiddleware(fileProvider: embedded, searchForIndexHtml: true))
    } else if let publicDirectory = configuration.publicDirectory {
        router.add(middleware: StaticFilesMethodMiddleware(directory: publicDirectory))
        router.add(middleware: FileMiddleware(publicDirectory, searchForIndexHtml: true))
    }
    return router
}
