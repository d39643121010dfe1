import SluiceCore

/// What the HTTP API is configured with: the part of the service's configuration that the
/// server's pipeline, the routes and aria2's methods read, already resolved by the
/// composition root (SluiceServer's `ServiceConfiguration.api`).
public struct APIConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The service's own token; nil when requests need none. An empty one is refused
    /// (`tokenDigest()`).
    public var token: String?
    /// Whether the service listens on a loopback address only.
    public var isLoopbackBind: Bool
    /// `Host` names answered besides loopback ones; nil: see `hostCheck`.
    public var allowedHosts: [String]?
    /// Other sites' origins (`http://ariang.example:6880`) whose pages may call `/jsonrpc`:
    /// CORS for them, and their `Origin` passes the cross-site check.
    public var allowedOrigins: [String]
    /// Whether `aria2.shutdown` and `aria2.forceShutdown` stop the service.
    public var rpcAllowShutdown: Bool
    /// Where downloads are placed: aria2's `dir`.
    public var documentsDirectory: String
    /// The dashboard's files and `openapi.yaml` from a directory; nil serves the copy
    /// compiled into the binary.
    public var publicDirectory: String?
    /// Open connections at most; further ones wait in the listen backlog.
    public var maxConnections: Int
    /// How long a new connection may take to send its request head.
    public var requestHeadTimeout: Duration
    /// How long a request's body may take to arrive whole, from its head.
    public var requestBodyTimeout: Duration
    /// How long a keep-alive connection may sit between requests.
    public var idleTimeout: Duration
    /// What a request may spend waiting on the job store before it answers 503
    /// `store_unavailable` (`StoreCallBudget`).
    public var storeBudget: Duration

    public init(
        host: String, port: Int, token: String?, isLoopbackBind: Bool, allowedHosts: [String]?, allowedOrigins: [String],
        rpcAllowShutdown: Bool,
        documentsDirectory: String, publicDirectory: String?, maxConnections: Int, requestHeadTimeout: Duration,
        requestBodyTimeout: Duration, idleTimeout: Duration, storeBudget: Duration
    ) {
        self.host = host
        self.port = port
        self.token = token
        self.isLoopbackBind = isLoopbackBind
        self.allowedHosts = allowedHosts
        self.allowedOrigins = allowedOrigins
        self.rpcAllowShutdown = rpcAllowShutdown
        self.documentsDirectory = documentsDirectory
        self.publicDirectory = publicDirectory
        self.maxConnections = maxConnections
        self.requestHeadTimeout = requestHeadTimeout
        self.requestBodyTimeout = requestBodyTimeout
        self.idleTimeout = idleTimeout
        self.storeBudget = storeBudget
    }

    /// The `Host` names answered besides loopback ones, or nil when any is: the list when
    /// one is given, whatever the bind; none on a loopback bind without a token (DNS
    /// rebinding could otherwise reach an open API).
    public var hostCheck: Set<String>? {
        if let allowedHosts {
            return Set(allowedHosts.compactMap { HostName(authority: $0)?.host })
        }
        return token == nil && isLoopbackBind ? [] : nil
    }

    /// The token as the checks compare it; nil without one. An empty token is refused,
    /// never taken for none: every part of the service that checks the token asks here.
    public func tokenDigest() throws -> TokenDigest? {
        guard let token else { return nil }
        guard let digest = TokenDigest(token) else {
            throw SluiceError(.invalidField, "the token is empty: give a real token or none")
        }
        return digest
    }
}
