public import AsyncHTTPClient
import Foundation
public import Logging
public import NIOCore
import NIOPosix
public import SluiceCore
import SluiceSystem
import Synchronization
import NIOHTTP1

/// Every request a download makes goes through here, so that two rules hold for each of
/// them — the probe, every segment, every redirect hop (CONTRACT §6):
/// - **Targets.** Under a public-only policy, the address connected to must be public. A
///   literal address is checked as written (in every form the resolver accepts); a name is
///   resolved here, checked, and the connection pinned to the checked address (through
///   AsyncHTTPClient's `dnsOverride`, so TLS still verifies the name), so DNS cannot answer
///   one address to the check and another to the connection. Redirects are followed here,
///   not inside the client, so each hop is checked the same way.
/// - **Credentials.** `Authorization`, `Cookie` and `Proxy-Authorization` go only to the
///   origin of the job's URL (curl's rule), never to an origin a redirect leads to.
public final class Fetcher: Sendable {
    /// What a fetch answered, and the URL that answered it after redirects.
    public struct Fetched: Sendable {
        public var response: HTTPClientResponse
        public var url: String
    }

    public static let maximumRedirects = 10
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    public let policy: TargetPolicy
    private let configuration: HTTPClient.Configuration
    private let shared: HTTPClient
    private let pinned = Mutex<PinnedClients>(PinnedClients())

    /// HTTP/1 only (parallel ranges over HTTP/2 would share one connection), up to
    /// `connectionsPerHost` connections per host, and a read timeout that turns a stalled
    /// connection into an error.
    public init(policy: TargetPolicy = .allowAll, stallTimeout: Double = 30, connectionsPerHost: Int = 16) {
        var configuration = HTTPClient.Configuration(
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
        self.configuration = configuration
        self.shared = HTTPClient(eventLoopGroup: DataPlane.eventLoopGroup, configuration: configuration)
    }

    /// Sends `request`, following redirects. `credentialsOrigin` is the job's URL: the
    /// origin its credentials may go to.
    public func execute(
        _ request: HTTPClientRequest, credentialsOrigin: String, deadline: NIODeadline, logger: Logger
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
            let client = try await client(for: origin.host)
            let response = try await client.execute(current, deadline: deadline, logger: logger)
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
                throw SluiceError(.invalidResponse, "the server redirected to a URL that is not http or https")
            }
            current.url = next.absoluteString
        }
    }

    /// The refusal for a URL that names a literal address the policy refuses, checked
    /// before anything is stored; nil for names, which are checked when they are resolved.
    public func literalRefusal(for url: String) -> SluiceError? {
        guard let host = URLOrigin(url)?.host, let address = IPAddress(host: host), !policy.allows(address) else { return nil }
        return TargetPolicy.refusal(host: host)
    }

    public func shutdown() async throws {
        let clients = pinned.withLock { $0.removeAll() }
        for client in clients { try? await client.shutdown() }
        try await shared.shutdown()
    }

    // MARK: Targets

    /// The client to reach `host` with, once its address is allowed.
    private func client(for host: String) async throws -> HTTPClient {
        if policy.allowsPrivateNetworks { return shared }
        if let literal = IPAddress(host: host) {
            guard policy.allows(literal) else { throw TargetPolicy.refusal(host: host) }
            return shared
        }
        let addresses = try await Self.resolve(host)
        guard let address = addresses.first(where: policy.allows) else {
            throw TargetPolicy.refusal(host: host)
        }
        let configuration = configuration
        let (client, evicted) = pinned.withLock { cache in
            cache.client(host: host, address: address.description) {
                var pinnedConfiguration = configuration
                pinnedConfiguration.dnsOverride = [host: address.description]
                return HTTPClient(eventLoopGroup: DataPlane.eventLoopGroup, configuration: pinnedConfiguration)
            }
        }
        if let evicted {
            // Its idle connections go; a request still using it fails once and is retried.
            Task { try? await evicted.shutdown() }
        }
        return client
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

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    init?(_ text: String) {
        guard let url = URL(string: text) else { return nil }
        self.init(url)
    }
}
