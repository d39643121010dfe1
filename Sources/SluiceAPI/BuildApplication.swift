import AsyncHTTPClient
import DownloadEngine
import JobService
import Foundation
public import Hummingbird
import HummingbirdCore
import JobStore
public import Logging
import Prometheus
import RangeOrigin
import ServiceLifecycle
import SluiceCore

/// What the service calls itself in `Server`.
let serverName = "sluice"

/// The request context of every Sluice route.
public typealias SluiceRequestContext = BasicRequestContext

/// The whole service: the HTTP application and the job service beside it.
public struct SluiceService: Sendable {
    public let application: any Service
    let jobs: JobService

    /// The services in the order a `ServiceGroup` must run them: a graceful shutdown stops
    /// them in reverse, so downloads are checkpointed before the server drains its connections.
    public var services: [any Service] { [application, jobs] }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully.
    public func run(logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        try await group.run()
    }
}

/// Composes the service: data directories, job store, HTTP client, scheduler, routes.
/// `onListening` receives the URL once the socket is bound.
public func buildService(
    configuration: ServiceConfiguration, logger: Logger,
    onListening: @escaping @Sendable (String) async -> Void = { _ in }
) throws -> SluiceService {
    if let token = configuration.token, token.isEmpty {
        throw SluiceError(.invalidField, "the token is empty: give a real token or none")
    }
    for directory in [configuration.dataDirectory, configuration.cacheDirectory, configuration.documentsDirectory, configuration.originRoot] {
        do {
            // Only this user: the job store holds job headers, which may be credentials.
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw SluiceError(.io, "cannot create the directory \(directory): check that it is writable by this user")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw SluiceError(.io, "the directory \(directory) is not writable by this user")
        }
    }
    let registry = PrometheusCollectorRegistry()
    let metrics = PrometheusMetricsFactory(registry: registry)
    let client = Fetcher(policy: configuration.targetPolicy, stallTimeout: configuration.stallTimeout)
    var schedulerConfiguration = JobScheduler.Configuration(
        cacheDirectory: configuration.cacheDirectory, documentsDirectory: configuration.documentsDirectory,
        maxActive: configuration.maxActive, retry: configuration.retry, stallTimeout: configuration.stallTimeout,
        limitRate: configuration.limitRate, minFreeSpace: configuration.minFreeSpace
    )
    schedulerConfiguration.releaseSlotAfter = configuration.releaseSlotAfter
    schedulerConfiguration.clock = configuration.clock
    let scheduler = try JobScheduler(
        configuration: schedulerConfiguration,
        repository: try SQLiteJobRepository(path: configuration.dataDirectory + "/sluice.sqlite"),
        client: client, metrics: metrics, logger: logger
    )
    let origin = try RangeOrigin(root: configuration.originRoot, metrics: metrics)
    let router = try buildRouter(
        configuration: configuration, scheduler: scheduler, origin: origin, registry: registry, metrics: metrics,
        logger: logger
    )
    let admission = OriginAdmission(allowedHosts: configuration.hostCheck, token: configuration.token.flatMap(TokenDigest.init))
    let host = configuration.host
    let application = Application(
        router: router,
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [
                    ConnectionDeadlineHandler(
                        headTimeout: .init(configuration.requestHeadTimeout), idleTimeout: .init(configuration.idleTimeout)
                    ),
                    origin.fileFastPath(
                        admits: admission.admits, extraHeaders: [.server: serverName],
                        answered: RequestMetricsMiddleware<SluiceRequestContext>.recorder(
                            factory: metrics, method: .get, route: "/files/**"
                        )
                    ),
                ]
            )
        ),
        configuration: .init(
            address: .hostname(host, port: configuration.port), serverName: serverName,
            availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections, logger: logger)
        ),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let shownHost = host.contains(":") ? "[\(host)]" : host
            await onListening("http://\(shownHost):\(port)")
        },
        logger: logger
    )
    return SluiceService(application: application, jobs: JobService(scheduler: scheduler, client: client, logger: logger))
}

/// The routes of the service. Middleware order: metrics see every answer; errors become
/// JSON bodies; security headers; the browser guard (Host, Origin) before the token check,
/// which decides on the route the router chose.
func buildRouter(
    configuration: ServiceConfiguration, scheduler: JobScheduler, origin: RangeOrigin,
    registry: PrometheusCollectorRegistry, metrics: PrometheusMetricsFactory, logger: Logger
) throws -> Router<SluiceRequestContext> {
    let router = Router(context: SluiceRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: RequestMetricsMiddleware(factory: metrics))
    router.add(middleware: ErrorBodyMiddleware(logger: logger))
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: BrowserGuardMiddleware(allowedHosts: configuration.hostCheck))
    if let token = configuration.token {
        guard let digest = TokenDigest(token) else {
            throw SluiceError(.invalidField, "the token is empty: give a real token or none")
        }
        router.add(middleware: BearerAuthMiddleware(token: digest))
    }
    router.get("/healthz") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"status":"ok"}"#))
        )
    }
    router.allowOnly([.get], at: "/healthz")
    for path in ["/files/**", "/testdata/:size"] {
        router.allowOnly([.get], at: RouterPath(stringLiteral: path))
    }
    JobsController(scheduler: scheduler).addRoutes(to: router)
    EventsController(scheduler: scheduler).addRoutes(to: router)
    MetricsController(registry: registry, factory: metrics, scheduler: scheduler).addRoutes(to: router)
    origin.addRoutes(to: router)
    if let publicDirectory = configuration.publicDirectory {
        router.get("/openapi.yaml") { _, _ in
            guard let data = FileManager.default.contents(atPath: publicDirectory + "/openapi.yaml") else {
                throw SluiceError(.notFound, "this service has no openapi.yaml")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
            )
        }
        router.allowOnly([.get], at: "/openapi.yaml")
        // Last, so that they apply only to paths no route matched: the dashboard's files.
        router.add(middleware: StaticFilesMethodMiddleware(directory: publicDirectory))
        router.add(middleware: FileMiddleware(publicDirectory, searchForIndexHtml: true))
    }
    return router
}

/// Starts the scheduler with the server and, on SIGTERM or SIGINT, stops every download
/// after its checkpoint, then closes the HTTP client.
struct JobService: Service {
    let scheduler: JobScheduler
    let client: Fetcher
    let logger: Logger

    func run() async throws {
        await scheduler.start()
        try? await gracefulShutdown()
        await scheduler.shutdown()
        try await client.shutdown()
        logger.info("downloads checkpointed")
    }
}
