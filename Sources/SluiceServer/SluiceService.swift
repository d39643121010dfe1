import DownloadEngine
import SluiceTLS
import Foundation
public import Hummingbird
public import JobService
import JobStore
import PostgresStore
public import Logging
import Prometheus
import RangeOrigin
public import ServiceLifecycle
public import SluiceAPI
import SluiceCore
import UnixSignals
import CoreMetrics

/// The whole service: the HTTP application and the job service beside it.
public struct SluiceService: Sendable {
    public let application: any Service
    /// The routes alone, to drive in-process (Hummingbird's `app.test(.router)`).
    public let routes: RouterResponder<SluiceRequestContext>
    /// The job service the API talks to (the scheduler over the SQLite store).
    public let jobs: any JobService
    /// Every route as `METHOD /path/{parameter}`, as the router holds them: what a test of
    /// every route (the token scopes) goes through, so a new route cannot be missed.
    public let routeTable: [String]
    let downloads: DownloadService
    /// The store's health for `/healthz`, asked every 2 s.
    let storeHealth: StoreHealth
    /// Webhook deliveries.
    let webhooks: WebhookDispatcher
    /// The writers of job changes and checkpoints (`JobWrites`, `CheckpointWriter`).
    let storeWriters: [any Service]
    /// A cluster node's heartbeat, rescue, change feed and progress writer (none alone).
    let clusterServices: [any Service]
    /// The schedule kept in effect and the disk's free space watched.
    let queueServices: [any Service]
    /// A cluster node's leaving the cluster, after every other service (none alone).
    let clusterMembership: [any Service]
    /// aria2's WebSocket notifications, for every client at once.
    let aria2Notifications: Aria2NotificationHub
    let certificateReloader: CertificateReloader?
    /// Ends when `aria2.shutdown` asks, and the group then shuts down gracefully.
    let rpcShutdown: RPCShutdownService

    /// The services in the order a `ServiceGroup` must run them. A graceful shutdown stops
    /// them in reverse, each once the one after it has returned (docs/job-service.md,
    /// "Services and shutdown"): webhook deliveries first (at once, as a stop used to cancel
    /// them); aria2's notifications; the schedule's ticks; a cluster node's loops; the downloads, checkpointed and
    /// their changes handed to the writers, then the HTTP client they and the webhooks share;
    /// the HTTP server, draining its connections; a cluster node's lease releases and the
    /// writers of checkpoints and job changes, writing what the downloads left them; the
    /// store's health, which the scheduler's shutdown still reads; last a cluster node's
    /// leaving the cluster, which closes its store.
    public var services: [ServiceGroupConfiguration.ServiceConfiguration] { services(serving: true) }

    /// The same without the HTTP server, for routes driven in-process (`routes`).
    public var servicesWithoutServer: [ServiceGroupConfiguration.ServiceConfiguration] { services(serving: false) }

    private func services(serving: Bool) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let running: [any Service] =
            clusterMembership + [storeHealth] + storeWriters + (serving ? [application] : []) + [downloads] + clusterServices
            + queueServices
            + [aria2Notifications] + (certificateReloader.map { [$0] } ?? []) + [webhooks]
        return running.map { .init(service: $0) } + [.init(service: rpcShutdown, successTerminationBehavior: .gracefullyShutdownGroup)]
    }

    /// Stops every download after its checkpoint and closes the HTTP client, for a service
    /// whose `services` never ran.
    public func stopJobs() async throws {
        try await downloads.stop()
    }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully.
    public func run(logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        try await group.run()
    }
}

/// Builds the service and runs `body` with it (which runs its services). With a cluster's
/// store, the store's pool of connections (`PostgresPool`) runs beside: from before the store
/// is opened until `body` has returned, after every service that uses it.
public func withService<T: Sendable>(
    configuration: ServiceConfiguration, logger: Logger, onListening: @escaping @Sendable (String) async -> Void = { _ in },
    _ body: (SluiceService) async throws -> T
) async throws -> T {
    guard let store = configuration.store else {
        return try await body(try await buildService(configuration: configuration, logger: logger, onListening: onListening))
    }
    try configuration.validate()
    let trust = try TLSTrust.make(caFile: configuration.caFile, environment: ProcessInfo.processInfo.environment)
    let pool = try PostgresPool(location: store, leaseDuration: configuration.lease, trust: trust, logger: logger)
    return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
        group.addTask { await pool.run() }
        defer { group.cancelAll() }
        let service = try await buildService(configuration: configuration, pool: pool, logger: logger, onListening: onListening)
        return try await body(service)
    }
}

/// The composition root: data directories, job store, HTTP client, scheduler, origin and
/// the HTTP application over them.
/// `onListening` receives the URL once the socket is bound. A cluster's store opened here runs
/// its pool of connections in a task of its own; `withService` runs it as a service.
public func buildService(
    configuration: ServiceConfiguration, logger: Logger,
    onListening: @escaping @Sendable (String) async -> Void = { _ in }
) async throws -> SluiceService {
    try await buildService(configuration: configuration, pool: nil, logger: logger, onListening: onListening)
}

func buildService(
    configuration: ServiceConfiguration, pool: PostgresPool?, logger: Logger,
    onListening: @escaping @Sendable (String) async -> Void
) async throws -> SluiceService {
    // Before anything is created on disk.
    try configuration.validate()
    if let warning = configuration.webhookWarning { logger.warning("\(warning)") }
    for directory in [
        configuration.dataDirectory, configuration.cacheDirectory, configuration.documentsDirectory, configuration.originRoot,
    ] {
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
    let trust = try TLSTrust.make(caFile: configuration.caFile, environment: ProcessInfo.processInfo.environment)
    let certificate = try configuration.tlsCertificate.map { path in
        try ServerCertificate(certificatePath: path, keyPath: configuration.tlsKey ?? path)
    }
    let client = Fetcher(
        policy: configuration.targetPolicy, stallTimeout: configuration.stallTimeout,
        connectionsPerHost: configuration.maxConnectionsPerHost, proxies: configuration.proxies, trust: trust, metrics: metrics
    )
    // What fails from here on shuts the client down first: an HTTP client dropped unclosed is a
    // trap in a debug build (a refused store became a crash, not a message).
    do {
        let hostConnections = HostConnections(limit: configuration.maxConnectionsPerHost) { host, count in
            let gauge = Gauge(label: "sluice_host_connections", dimensions: [("host", host)], factory: metrics)
            // A host back at no connection drops its series: kept at 0, there was one for every
            // host ever contacted.
            if count == 0 { gauge.destroy() } else { gauge.record(count) }
        }
        var schedulerConfiguration = JobScheduler.Configuration(
            cacheDirectory: configuration.cacheDirectory, documentsDirectory: configuration.documentsDirectory,
            maxActive: configuration.maxActive, retry: configuration.retry, stallTimeout: configuration.stallTimeout,
            limitRate: configuration.limitRate, minFreeSpace: configuration.minFreeSpace
        )
        schedulerConfiguration.releaseSlotAfter = configuration.releaseSlotAfter
        schedulerConfiguration.clock = configuration.clock
        schedulerConfiguration.hostConnections = hostConnections
        schedulerConfiguration.nodeName = configuration.nodeName
        schedulerConfiguration.allowInsecureTLS = configuration.allowInsecureTLS
        if let directory = configuration.trustedKeysDirectory {
            // Written again at every start from the directory: the directory is the truth.
            schedulerConfiguration.trustedKeys = try TrustedKeys.load(
                directory: directory, keyringPath: configuration.dataDirectory + "/trusted-keys.gpg")
        }
        schedulerConfiguration.storeBudget = configuration.storeBudget
        schedulerConfiguration.schedule = configuration.schedule
        let repository: any JobRepository
        let tokenStore: any TokenStore
        if let store = configuration.store {
            let cluster =
                if let pool {
                    try await PostgresJobRepository(
                        pool: pool, nodeName: configuration.nodeName, leaseDuration: configuration.lease, logger: logger)
                } else {
                    try await PostgresJobRepository(
                        location: store, nodeName: configuration.nodeName, leaseDuration: configuration.lease, trust: trust, logger: logger
                    )
                }
            logger.info("node \(configuration.nodeName) of the cluster on \(store.redacted)")
            repository = cluster
            tokenStore = cluster.tokens
        } else {
            let local = try SQLiteJobRepository(path: configuration.sqlitePath)
            repository = local
            tokenStore = local
        }
        let tokens = TokenRegistry(master: try configuration.tokenDigest(), store: tokenStore)
        let webhooks = WebhookDispatcher(
            configuration: .init(
                url: configuration.webhookURL, secret: configuration.webhookSecret, schedule: configuration.webhookSchedule,
                retention: configuration.webhookRetention
            ),
            repository: repository, client: client, clock: configuration.clock, metrics: metrics, logger: logger
        )
        let storeHealth = StoreHealth(repository: repository)
        let scheduler = try await JobScheduler(
            configuration: schedulerConfiguration, repository: repository, client: client, webhooks: webhooks,
            storeHealth: storeHealth, metrics: metrics, logger: logger, engine: configuration.engine
        )
        let origin = try RangeOrigin(root: configuration.originRoot, metrics: metrics)
        let shutdown = RPCShutdown()
        let api = configuration.api
        let aria2 = Aria2Service(jobs: scheduler, configuration: api, tokens: tokens, shutdown: shutdown)
        let router = try buildRouter(
            configuration: api, jobs: scheduler, origin: origin, registry: registry, metrics: metrics, logger: logger,
            storeHealth: storeHealth, tokens: tokens, aria2: aria2
        )
        let routes = router.buildResponder()
        let application = try buildApplication(
            configuration: api, routes: routes, origin: origin, metrics: metrics, logger: logger,
            certificate: certificate, storeHealth: storeHealth, aria2: aria2, onListening: onListening
        )
        return SluiceService(
            application: application, routes: routes, jobs: scheduler, routeTable: router.routes.map(\.description),
            downloads: DownloadService(scheduler: scheduler, client: client, logger: logger),
            storeHealth: storeHealth, webhooks: webhooks, storeWriters: scheduler.storeWriters,
            clusterServices: scheduler.clusterServices, queueServices: scheduler.queueServices,
            clusterMembership: scheduler.clusterMembership,
            aria2Notifications: aria2.notifications,
            certificateReloader: certificate.map { CertificateReloader(certificate: $0, logger: logger) },
            rpcShutdown: RPCShutdownService(shutdown: shutdown, logger: logger)
        )
    } catch {
        try? await client.shutdown()
        throw error
    }
}

/// Returns when `aria2.shutdown` asks (`--rpc-allow-shutdown`), which shuts the group down
/// gracefully as SIGTERM does; or at the group's own graceful shutdown.
struct RPCShutdownService: Service {
    let shutdown: RPCShutdown
    let logger: Logger

    func run() async {
        for await _ in shutdown.requests.cancelOnGracefulShutdown() {
            logger.notice("aria2.shutdown asked: shutting down")
            return
        }
    }
}

/// Reads the service's TLS certificate and key again on each SIGHUP (a renewal).
struct CertificateReloader: Service {
    let certificate: ServerCertificate
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            certificate.reload(logger: logger)
        }
    }
}

/// Starts the scheduler with the server and, on SIGTERM or SIGINT, stops every download
/// after its checkpoint, then closes the HTTP client the downloads and webhooks share (webhook
/// deliveries have stopped by then: they come after this in the group). The services it needs
/// (the store's health, webhook deliveries, a cluster node's loops) run beside it.
struct DownloadService: Service {
    let scheduler: JobScheduler
    let client: Fetcher
    let logger: Logger

    func run() async throws {
        await scheduler.start()
        try? await gracefulShutdown()
        try await stop()
        logger.info("downloads checkpointed")
    }

    func stop() async throws {
        await scheduler.shutdown()
        try await client.shutdown()
    }
}
