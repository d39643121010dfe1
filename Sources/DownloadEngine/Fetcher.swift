public import AsyncHTTPClient
public import CoreMetrics
import Foundation
public import Logging
public import NIOCore
import NIOPosix
public import SluiceCore
public import SluiceTLS
import SluiceSystem
import Synchronization
import NIOHTTP1
import X509

/// Every request a download makes goes through here, so that two rules hold for each of
/// them — the probe, every segment, every redirect hop (docs/security.md, "Targets" and
/// "Credentials"):
/// - **Targets.** Under a public-only policy, the address connected to must be public. A
///   literal address is checked as written (in every form the resolver accepts); a name is
///   resolved here, checked, and the connection pinned to the checked address (through
///   AsyncHTTPClient's `dnsOverride`, so TLS still verifies the name), so DNS cannot answer
///   one address to the check and another to the connection. Redirects are followed here,
///   not inside the client, so each hop is checked the same way.
/// - **Credentials.** `Authorization`, `Cookie` and `Proxy-Authorization` go only to the
///   origin of the job's URL (curl's rule), never to an origin a redirect leads to.
/// - **Proxies.** A hop goes through the job's own proxy, else the one `ProxySettings`
///   choose for its URL (`--proxy`, the environment, `no_proxy`). Through a proxy the proxy
///   resolves names, so only literal target addresses are checked here; a job's own proxy
///   is a target like any other (checked and pinned), the service's is the operator's.
///   A proxy's refusal (a 4xx to `CONNECT`, or an answer it marks as its own) fails at once
///   with its status; a 5xx, a 408, a 429 or a drop is transient. Messages name the proxy,
///   never its credentials. Plain http goes through an HTTP proxy in absolute form
///   (`ForwardProxyClient`), as curl sends it.
public final class Fetcher: Sendable {
    /// What a fetch answered, and the URL that answered it after redirects.
    public struct Fetched: Sendable {
        public var response: HTTPClientResponse
        public var url: String
    }

    public static let maximumRedirects = 10
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// Whether `name` is one of `credentialHeaders`, in any case.
    static func isCredential(_ name: String) -> Bool { credentialHeaders.contains { $0.lowercased() == name.lowercased() } }

    public let policy: TargetPolicy
    public let proxies: ProxySettings
    public let trust: TLSTrust
    private let metrics: any MetricsFactory
    private let configuration: HTTPClient.Configuration
    private let shared: HTTPClient
    /// The same without certificate verification, for downloads that asked for it.
    private let sharedInsecure: HTTPClient
    private let pinned = Mutex<PinnedClients>(PinnedClients())
    private let forwardProxy: ForwardProxyClient

    /// HTTP/1 only (parallel ranges over HTTP/2 would share one connection), up to
    /// `connectionsPerHost` connections per host, a read timeout that turns a stalled
    /// connection into an error, and TLS that trusts what `trust` says.
    public init(
        policy: TargetPolicy = .allowAll, stallTimeout: Double = 30, connectionsPerHost: Int = 16, proxies: ProxySettings = .none,
        trust: TLSTrust = .system, metrics: any MetricsFactory = MetricsSystem.factory
    ) {
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: trust.clientConfiguration(),
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .milliseconds(Int64(stallTimeout * 1000))),
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost),
            ignoreUncleanSSLShutdown: false,
            decompression: .disabled
        )
        configuration.httpVersion = .http1Only
        // A refused connection is one failure for the engine's own backoff, not ten seconds
        // of silent retries inside the pool.
        configuration.connectionPool.retryConnectionEstablishment = false
        self.policy = policy
        self.proxies = proxies
        self.trust = trust
        self.metrics = metrics
        self.configuration = configuration
        self.shared = HTTPClient(eventLoopGroup: DataPlane.eventLoopGroup, configuration: configuration)
        self.sharedInsecure = HTTPClient(
            eventLoopGroup: DataPlane.eventLoopGroup, configuration: Self.insecure(configuration, trust: trust)
        )
        self.forwardProxy = ForwardProxyClient(
            group: DataPlane.eventLoopGroup, readTimeout: .milliseconds(Int64(stallTimeout * 1000))
        )
    }

    private static func insecure(_ configuration: HTTPClient.Configuration, trust: TLSTrust) -> HTTPClient.Configuration {
        var insecure = configuration
        insecure.tlsConfiguration = trust.clientConfiguration(insecure: true)
        return insecure
    }

    /// Sends `request`, following redirects. `credentialsOrigin` is the job's URL: the
    /// origin its credentials may go to.
    public func execute(
        _ request: HTTPClientRequest, credentialsOrigin: String, deadline: NIODeadline, logger: Logger,
        proxy jobProxy: EndpointURL? = nil, insecure: Bool = false
    ) async throws -> Fetched {
        let home = URLOrigin(credentialsOrigin)
        var current = request
        var redirects = 0
        while true {
            guard let url = URL(string: current.url), let origin = URLOrigin(url) else {
                throw SluiceError(.invalidURL, "the URL cannot be fetched")
            }
            if origin != home {
                for name in Self.credentialHeaders { current.headers.remove(name: name) }
            } else {
                // A redirect back home: the job's own headers again.
                for name in Self.credentialHeaders where current.headers[name].isEmpty {
                    current.headers.add(contentsOf: request.headers.filter { $0.name.lowercased() == name.lowercased() })
                }
            }
            // The pinned client's `dnsOverride` is looked up with the host exactly as the URL
            // spells it: a name is sent lower-cased, so `Example.COM` cannot miss the pin
            // and be resolved again (DNS rebinding).
            if url.host != origin.host, IPAddress(host: origin.host) == nil,
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            {
                components.host = origin.host
                if let lowered = components.url?.absoluteString { current.url = lowered }
            }
            let response = try await send(
                current, body: nil, to: origin, jobProxy: jobProxy, insecure: insecure, deadline: deadline, logger: logger
            )
            guard [301, 302, 303, 307, 308].contains(response.status.code),
                let location = response.headers.first(name: "Location")
            else {
                return Fetched(response: response, url: current.url)
            }
            redirects += 1
            guard redirects <= Self.maximumRedirects else {
                throw SluiceError(.tooManyRedirects, "more than \(Self.maximumRedirects) redirects")
            }
            guard let next = URL(string: location, relativeTo: url)?.absoluteURL, URLOrigin(next) != nil else {
                throw SluiceError(
                    .invalidResponse, "the server redirected to a URL that cannot be fetched (not http or https, or a percent-encoded host)"
                )
            }
            current.url = next.absoluteString
        }
    }

    /// Sends `request` with `body` once, following no redirect: a webhook call. Its target
    /// is checked like a download's, and it goes through the service's proxy as its URL
    /// decides.
    public func sendOnce(
        _ request: HTTPClientRequest, body: ByteBuffer?, deadline: NIODeadline, logger: Logger
    ) async throws -> HTTPClientResponse {
        guard let origin = URLOrigin(request.url) else { throw SluiceError(.invalidURL, "the URL cannot be fetched") }
        return try await send(request, body: body, to: origin, jobProxy: nil, insecure: false, deadline: deadline, logger: logger)
    }

    /// The refusal for a proxy a job names when its address is a literal the policy refuses.
    public func literalRefusal(proxy: EndpointURL) -> SluiceError? { literalRefusal(host: proxy.host) }

    /// The refusal for a URL that names a literal address the policy refuses, checked
    /// before anything is stored; nil for names, which are checked when they are resolved.
    public func literalRefusal(for url: String) -> SluiceError? {
        URLOrigin(url).flatMap { literalRefusal(host: $0.host) }
    }

    /// The refusal for `host` when it is a literal address the policy refuses.
    private func literalRefusal(host: String) -> SluiceError? {
        guard let address = IPAddress(host: host), !policy.allows(address) else { return nil }
        return TargetPolicy.refusal(host: host)
    }

    /// The refusal for a loopback name the policy refuses (`TargetPolicy.refusesLoopbackName`):
    /// never handed to a proxy, which would resolve it to its own host's loopback.
    private func loopbackNameRefusal(host: String) -> SluiceError? {
        policy.refusesLoopbackName(host) ? TargetPolicy.refusal(host: host) : nil
    }

    /// A fetcher dropped without `shutdown()` (a test that threw before reaching it) shuts its
    /// clients down behind itself: HTTPClient traps in its deinit when it is still running, and
    /// took the whole test process with it (CI's SIGILL, `FetcherTests` under load). A client
    /// shut down already answers `alreadyShutdown`, ignored; one shutting down stays alive
    /// until it is done.
    deinit {
        for client in pinned.withLock({ $0.removeAll() }) + [shared, sharedInsecure] { client.shutdown { _ in } }
    }

    public func shutdown() async throws {
        let clients = pinned.withLock { $0.removeAll() }
        for client in clients { try? await client.shutdown() }
        try await shared.shutdown()
        try await sharedInsecure.shutdown()
    }

    // MARK: Targets

    /// One request to `origin`, direct or through the proxy chosen for it.
    private func send(
        _ request: HTTPClientRequest, body: ByteBuffer?, to origin: URLOrigin, jobProxy: EndpointURL?, insecure: Bool,
        deadline: NIODeadline, logger: Logger
    ) async throws -> HTTPClientResponse {
        var request = request
        if let body { request.body = .bytes(body) }
        guard let proxy = proxies.proxy(scheme: origin.scheme, host: origin.host, jobProxy: jobProxy) else {
            let (client, address) = try await client(for: origin.host, insecure: insecure)
            do {
                return try await client.execute(request, deadline: deadline, logger: logger)
            } catch let error where TLSFailure.isHandshakeFailure(error) {
                throw await Self.tlsFailure(error, origin: origin, address: address ?? origin.host)
            }
        }
        if let refusal = literalRefusal(host: origin.host) ?? loopbackNameRefusal(host: origin.host) { throw refusal }
        let address = try await proxyAddress(proxy, checked: proxy == jobProxy)
        // The service's proxies by name (a few, from its configuration); every job's own one
        // under `job`, so that the series do not grow with each proxy a job names.
        let proxyLabel = proxy == jobProxy ? "job" : proxy.authority
        do {
            if origin.scheme == "http", proxy.scheme == "http" {
                // In absolute form, as curl sends it: standard proxies allow CONNECT only to 443.
                let response = try await forwardProxy.execute(
                    request, body: body, host: address, port: proxy.port, authorization: proxy.basicAuthorization, deadline: deadline
                )
                if response.status == .proxyAuthenticationRequired {
                    throw SluiceError(.network, "the proxy \(proxy.redacted) refused the credentials (407 Proxy Authentication Required)")
                }
                if let refusal = Self.proxyRefusal(response, proxy: proxy) { throw refusal }
                return response
            }
            return try await client(through: proxy, address: address, insecure: insecure).execute(
                request, deadline: deadline, logger: logger)
        } catch let error as HTTPClientError where error == .readTimeout {
            throw error
        } catch let transient as TransientFailure {
            Counter(label: "sluice_proxy_errors_total", dimensions: [("proxy", proxyLabel)], factory: metrics).increment()
            throw transient
        } catch let error where TLSFailure.isHandshakeFailure(error) {
            // The handshake is with the origin, through the tunnel: the proxy did its part.
            throw await Self.tlsFailure(error, origin: origin, address: nil)
        } catch let error where !(error is CancellationError) && !Task.isCancelled && !(error is SluiceError) {
            Counter(label: "sluice_proxy_errors_total", dimensions: [("proxy", proxyLabel)], factory: metrics).increment()
            throw await proxyFailure(error, proxy: proxy, address: address, target: origin)
        } catch let error as SluiceError {
            Counter(label: "sluice_proxy_errors_total", dimensions: [("proxy", proxyLabel)], factory: metrics).increment()
            throw error
        }
    }

    /// The `tls` failure for a handshake with `origin` that failed: what was wrong with the
    /// certificate, read from it over one more handshake to `address` (nil through a proxy,
    /// where it is not read again), or why the protocol failed.
    static func tlsFailure(_ error: any Error, origin: URLOrigin, address: String?) async -> SluiceError {
        let shown = origin.port == 443 ? origin.host : "\(origin.host):\(origin.port)"
        guard TLSFailure.isCertificateFailure(error) else {
            return SluiceError(.tls, TLSFailure.protocolMessage(error, host: shown), cause: error)
        }
        let leaf =
            if let address { await TLSDiagnosis.leafCertificate(host: origin.host, connectTo: address, port: origin.port) } else {
                nil as Certificate?
            }
        return SluiceError(.tls, TLSFailure.certificateMessage(leaf: leaf, host: origin.host), cause: error)
    }

    /// The `tls` failure `error` is when it is a failed handshake with `url`'s server, for
    /// callers with a client of their own (`sluice healthcheck`); nil for any other error.
    public static func tlsFailure(_ error: any Error, url: String) async -> SluiceError? {
        guard TLSFailure.isHandshakeFailure(error), let origin = URLOrigin(url) else { return nil }
        return await tlsFailure(error, origin: origin, address: origin.host)
    }

    /// What a failure through `proxy` tells the user: the proxy, redacted, and why. A proxy
    /// that refuses (a 4xx to `CONNECT`: 403 by its rules, 407 for credentials) is final,
    /// with its status; a 5xx or a drop is retried.
    func proxyFailure(_ error: any Error, proxy: EndpointURL, address: String, target: URLOrigin) async -> any Error {
        let name = proxy.redacted
        if let error = error as? HTTPClientError, error == .proxyAuthenticationRequired {
            return SluiceError(.network, "the proxy \(name) refused the credentials (407 Proxy Authentication Required)", cause: error)
        }
        if let error = error as? HTTPClientError, error == .invalidProxyResponse, proxy.scheme == "http",
            let status = await ProxyRefusal.connectStatus(
                proxyHost: address, proxyPort: proxy.port, target: target, authorization: proxy.basicAuthorization
            ), status.code != 200
        {
            let message = "the proxy \(name) refused the connection to \(target.host):\(target.port): \(status.code) \(status.reasonPhrase)"
            if (400..<500).contains(status.code), status.code != 408, status.code != 429 {
                return SluiceError(.network, message, cause: error)
            }
            return TransientFailure(error: SluiceError(.network, message, cause: error))
        }
        return TransientFailure(
            error: SluiceError(
                .network, "the proxy \(name) failed: " + TransportFailureText.describe(error, target: "\(proxy.host):\(proxy.port)"),
                cause: error))
    }

    /// An answer the proxy made itself, not the origin's, as it says so (RFC 9209's
    /// `Proxy-Status` with an error, or Squid's `X-Squid-Error`): a 4xx is its rules
    /// refusing (final), a 5xx its failing to reach the origin (retried).
    static func proxyRefusal(_ response: HTTPClientResponse, proxy: EndpointURL) -> (any Error)? {
        let status = response.status
        guard status.code >= 400,
            response.headers["Proxy-Status"].contains(where: { $0.contains("error=") }) || response.headers.contains(name: "X-Squid-Error")
        else { return nil }
        let message = "the proxy \(proxy.redacted) refused the request: \(status.code) \(status.reasonPhrase)"
        if status.code < 500, status.code != 408, status.code != 429 { return SluiceError(.network, message) }
        let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
        return TransientFailure(error: SluiceError(.network, message), retryAfter: retryAfter)
    }

    /// The address to connect to `proxy` at. A job's own proxy (`checked`) is a target: its
    /// address must be allowed, and a name is resolved here and pinned.
    private func proxyAddress(_ proxy: EndpointURL, checked: Bool) async throws -> String {
        guard checked, !policy.allowsPrivateNetworks else { return proxy.host }
        if let literal = IPAddress(host: proxy.host) {
            guard policy.allows(literal) else { throw TargetPolicy.refusal(host: proxy.host) }
            return proxy.host
        }
        guard let allowed = try await Self.resolve(proxy.host).first(where: policy.allows) else {
            throw TargetPolicy.refusal(host: proxy.host)
        }
        return allowed.description
    }

    /// The client for connections through `proxy` at `address`.
    private func client(through proxy: EndpointURL, address: String, insecure: Bool) -> HTTPClient {
        var configuration = insecure ? Self.insecure(configuration, trust: trust) : configuration
        switch proxy.scheme {
        case "socks5":
            configuration.proxy = .socksServer(host: address, port: proxy.port)
        default:
            let authorization = proxy.user.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
            configuration.proxy = .server(host: address, port: proxy.port, authorization: authorization)
        }
        let (client, evicted) = pinned.withLock { cache in
            cache.client(host: (insecure ? "insecure proxy " : "proxy ") + proxy.text, address: address) {
                HTTPClient(eventLoopGroup: DataPlane.eventLoopGroup, configuration: configuration)
            }
        }
        if let evicted { Task { try? await evicted.shutdown() } }
        return client
    }

    /// The client to reach `host` with, once its address is allowed, and the address it is
    /// pinned to (nil: the host as written, a literal or a name the policy lets resolve).
    private func client(for host: String, insecure: Bool) async throws -> (HTTPClient, String?) {
        let unpinned = insecure ? sharedInsecure : shared
        if policy.allowsPrivateNetworks { return (unpinned, nil) }
        if let literal = IPAddress(host: host) {
            guard policy.allows(literal) else { throw TargetPolicy.refusal(host: host) }
            return (unpinned, nil)
        }
        let addresses = try await Self.resolve(host)
        guard let address = addresses.first(where: policy.allows) else {
            throw TargetPolicy.refusal(host: host)
        }
        let configuration = insecure ? Self.insecure(configuration, trust: trust) : configuration
        let (client, evicted) = pinned.withLock { cache in
            cache.client(host: (insecure ? "insecure " : "") + host, address: address.description) {
                var pinnedConfiguration = configuration
                pinnedConfiguration.dnsOverride = [host: address.description]
                return HTTPClient(eventLoopGroup: DataPlane.eventLoopGroup, configuration: pinnedConfiguration)
            }
        }
        if let evicted {
            // Its idle connections go; a request still using it fails once and is retried.
            Task { try? await evicted.shutdown() }
        }
        return (client, address.description)
    }

    /// The addresses `host` resolves to, by the system resolver, off the cooperative pool.
    static func resolve(_ host: String) async throws -> [IPAddress] {
        let addresses = try await NIOThreadPool.singleton.runIfActive { () throws -> [IPAddress] in
            guard let addresses = SystemResolver.addresses(of: host) else {
                throw SluiceError(.network, "cannot resolve the host \(host)")
            }
            return addresses
        }
        guard !addresses.isEmpty else { throw SluiceError(.network, "cannot resolve the host \(host)") }
        return addresses
    }
}

/// Clients pinned to one checked address each, least recently used evicted past a bound.
struct PinnedClients: ~Copyable {
    static let capacity = 64
    private var clients: [String: (client: HTTPClient, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0

    mutating func client(host: String, address: String, make: () -> HTTPClient) -> (HTTPClient, evicted: HTTPClient?) {
        clock += 1
        let key = host.lowercased() + " " + address
        if let entry = clients[key] {
            clients[key]?.lastUse = clock
            return (entry.client, nil)
        }
        var evicted: HTTPClient?
        if clients.count >= Self.capacity, let oldest = clients.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            evicted = oldest.value.client
            clients[oldest.key] = nil
        }
        let client = make()
        clients[key] = (client, clock)
        return (client, evicted)
    }

    mutating func removeAll() -> [HTTPClient] {
        defer { clients = [:] }
        return clients.values.map(\.client)
    }
}

/// The scheme, host and port of an http(s) URL: what "the same origin" compares.
struct URLOrigin: Equatable {
    var scheme: String
    var host: String
    var port: Int

    /// Nil for a host that is percent-encoded (but an IPv6 zone's `%25`): its decoded form,
    /// which a proxy or a resolver would use, is another host than the one the target
    /// rules would judge (`x%40127.0.0.1`). The API refuses such URLs; this keeps one
    /// stored before that from being fetched.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, let written = url.host(percentEncoded: true),
            !Self.encodesASCII(written) || written.contains(":")
        else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    init?(_ text: String) {
        guard let url = URL(string: text) else { return nil }
        self.init(url)
    }

    /// Whether a host as written holds a percent-encoded ASCII character (`%40`, `%2f`,
    /// `%41`): one that decodes into another host or a delimiter. The encoded UTF-8 of an
    /// internationalised name (bytes from 0x80) is not that, and is fetched.
    static func encodesASCII(_ host: String) -> Bool {
        let bytes = Array(host.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count,
                    let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
                else { return true }
                if value < 0x80 { return true }
                index += 3
            } else {
                index += 1
            }
        }
        return false
    }

    /// `host:port` as messages name it (`[::1]:8080`).
    var shown: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
}
