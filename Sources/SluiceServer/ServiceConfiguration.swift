import Foundation
public import JobService
public import SluiceAPI
public import SluiceCore

/// Everything `sluice serve` is configured with, already resolved from flags, the
/// environment and defaults. The HTTP API receives its part of it (`api`).
public struct ServiceConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Holds `cache/`, `documents/` and the job store.
    public var dataDirectory: String
    /// The directory `/files/` serves.
    public var originRoot: String
    public var maxActive: Int
    public var token: String?
    public var limitRate: Int64?
    /// `--schedule FILE`, read: in effect (and stored) at start; nil keeps the stored one.
    public var schedule: Schedule?
    /// The dashboard's files and `openapi.yaml` from a directory (`--public`); nil serves
    /// the copy compiled into the binary.
    public var publicDirectory: String?
    public var retry: RetryPolicy
    public var stallTimeout: Double
    /// Whether jobs may reach loopback, private and link-local addresses; nil decides by
    /// the bind address: allowed on a loopback bind, refused on any other (docs/security.md,
    /// "Targets").
    public var allowPrivateNetworks: Bool?
    /// `Host` names answered besides loopback ones; nil: see `APIConfiguration.hostCheck`.
    public var allowedHosts: [String]?
    /// Other sites' origins (`http://ariang.example:6880`) whose pages may call `/jsonrpc`
    /// (`--allowed-origins`): CORS for them, and their `Origin` passes the cross-site check.
    public var allowedOrigins: [String] = []
    /// Whether `aria2.shutdown` and `aria2.forceShutdown` stop the service (`--rpc-allow-shutdown`).
    public var rpcAllowShutdown = false
    /// Free space a download's reservation must leave (nil: the smaller of 512 MiB and 5 %
    /// of the file system).
    public var minFreeSpace: Int64?
    /// A remote's wait (`Retry-After`) at least this long gives the job's slot to another
    /// job while it waits.
    public var releaseSlotAfter: Duration = .seconds(30)
    /// Waits, rates and stalls are measured on this clock (tests pass a faster one).
    public var clock: ElapsedClock = .continuous
    /// What runs each download: nil for the real engine on the service's client; tests of
    /// the API in process give one that needs no socket.
    public var engine: (any RunEngine)?
    /// Open connections at most; further ones wait in the listen backlog.
    public var maxConnections: Int = 4096
    /// How long a new connection may take to send its request head.
    public var requestHeadTimeout: Duration = .seconds(30)
    /// How long a request's body may take to arrive whole, from its head (bodies are
    /// small: 1 MiB at most). Not a flag.
    public var requestBodyTimeout: Duration = .seconds(30)
    /// How long a keep-alive connection may sit between requests; an HTTP/2 connection
    /// with no open stream is closed `requestHeadTimeout` after that, whether or not its
    /// peer answers the GOAWAY's PING.
    public var idleTimeout: Duration = .seconds(60)
    /// Told of every job's end (`--webhook`), signed with `webhookSecret` when set.
    public var webhookURL: String?
    public var webhookSecret: String?
    /// When failed webhook deliveries are tried again, and for how long.
    public var webhookSchedule = WebhookSchedule()
    /// How long a delivered or given-up delivery of a live job is kept (`--webhook-retention`).
    public var webhookRetention: Duration = .seconds(7 * 24 * 3600)
    /// `--proxy` and the proxy environment variables.
    public var proxies: ProxySettings = .none
    /// Connections of all downloads to one host at once.
    public var maxConnectionsPerHost: Int = 16
    /// The PostgreSQL database of a cluster this node is one of (`--store`); nil for the
    /// single node's SQLite store in the data directory.
    public var store: PostgresLocation?
    /// This node's name in a cluster (the host name unless given).
    public var nodeName: String = ProcessInfo.processInfo.hostName
    /// How long a node's claim on a job lasts without renewal (it renews it every fifth of
    /// that, and with each checkpoint); a node silent longer loses its jobs to the others.
    public var lease: Duration = .seconds(15)
    /// What a request may spend waiting on the job store before it answers 503
    /// `store_unavailable` (`StoreCallBudget`): 2 s (docs/job-service.md, "Store calls"). Not a
    /// flag; a test pass that is not about store outages sets more (under its load on 2 cores,
    /// a healthy PostgreSQL's round trips added up past 2 s now and then).
    public var storeBudget: Duration = StoreCallBudget.request
    /// The certificate chain and key the port is served with over TLS (`--tls-cert`,
    /// `--tls-key`; PEM); nil for plain HTTP.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// PEM certificates outgoing TLS trusts besides the system store (`--ca-file`).
    public var caFile: String?
    /// Whether a job may ask for `"insecure": true` (`--allow-insecure-tls`).
    public var allowInsecureTLS = false
    /// The directory of keys signatures are checked against (`--trusted-keys`).
    public var trustedKeysDirectory: String?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String = "./sluice-data",
        originRoot: String? = nil, maxActive: Int = 3, token: String? = nil, limitRate: Int64? = nil,
        publicDirectory: String? = nil, retry: RetryPolicy = RetryPolicy(), stallTimeout: Double = 30
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.originRoot = originRoot ?? dataDirectory + "/documents"
        self.maxActive = maxActive
        self.token = token
        self.limitRate = limitRate
        self.publicDirectory = publicDirectory
        self.retry = retry
        self.stallTimeout = stallTimeout
    }

    /// Whether the service listens on a loopback address only.
    /// A literal loopback address or `localhost`; a name under `.localhost` is not trusted
    /// here, since the resolver could give it any address.
    public var isLoopbackBind: Bool {
        host.lowercased() == "localhost" || (IPAddress(host: host)?.isLoopback ?? false)
    }

    /// The addresses jobs may connect to.
    public var targetPolicy: TargetPolicy {
        TargetPolicy(allowsPrivateNetworks: allowPrivateNetworks ?? isLoopbackBind)
    }

    /// The SQLite job store of a single node (the named tokens are in it too).
    public var sqlitePath: String { dataDirectory + "/sluice.sqlite" }

    /// The token as the checks compare it; nil without one. An empty token is refused,
    /// never taken for none (`APIConfiguration.tokenDigest()`).
    public func tokenDigest() throws -> TokenDigest? {
        try api.tokenDigest()
    }

    /// What the HTTP API reads of this configuration.
    public var api: APIConfiguration {
        APIConfiguration(
            host: host, port: port, token: token, isLoopbackBind: isLoopbackBind, allowedHosts: allowedHosts,
            allowedOrigins: allowedOrigins, rpcAllowShutdown: rpcAllowShutdown, documentsDirectory: documentsDirectory,
            publicDirectory: publicDirectory, maxConnections: maxConnections, requestHeadTimeout: requestHeadTimeout,
            requestBodyTimeout: requestBodyTimeout, idleTimeout: idleTimeout, storeBudget: storeBudget
        )
    }

    /// Throws when the configuration cannot be served: an empty token, or a `--webhook` that
    /// names a literal address jobs may not reach (docs/webhooks.md, "Where calls may go").
    public func validate() throws {
        _ = try tokenDigest()
        for origin in allowedOrigins where WebOrigin(origin) == nil {
            throw SluiceError(
                .invalidField, "--allowed-origins: \(origin) is not an origin such as http://ariang.example:6880 (http or https, no path)")
        }
        if let webhookURL, let host = try? EndpointURL(webhookURL, schemes: EndpointURL.webhookSchemes, field: "webhook").host,
            let address = IPAddress(host: host), !targetPolicy.allows(address)
        {
            throw SluiceError(
                .forbiddenTarget, "--webhook names \(host), an address this service may not reach: see --allow-private-networks"
            )
        }
    }

    /// What the log warns of at a start: a `--webhook` whose name is loopback by definition
    /// (`localhost`, `*.localhost`, RFC 6761) where loopback is refused. The service starts;
    /// each delivery to it fails at its first attempt (`forbidden_target`).
    public var webhookWarning: String? {
        guard let webhookURL, let host = (try? EndpointURL(webhookURL, schemes: EndpointURL.webhookSchemes, field: "webhook"))?.host,
            targetPolicy.refusesLoopbackName(host)
        else { return nil }
        return
            "--webhook names \(host), a loopback name this service may not reach: every delivery to it will fail (see --allow-private-networks)"
    }

    public var cacheDirectory: String { dataDirectory + "/cache" }
    public var documentsDirectory: String { dataDirectory + "/documents" }
}
