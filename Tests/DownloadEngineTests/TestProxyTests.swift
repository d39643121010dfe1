import AsyncHTTPClient
import Foundation
import NIOCore
import SluiceTestSupport
import Testing

/// The test proxies work with the real client: AsyncHTTPClient downloads from the Range
/// origin through them, and each refusal surfaces as an error.
@Suite struct TestProxyTests {
    static let path = "/testdata/1000000?seed=7"

    /// Runs `body` with an origin on 127.0.0.1 and the bytes `path` has there, fetched directly.
    static func withOriginBytes(_ body: @Sendable (_ port: Int, _ expected: [UInt8]) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let expected = try await fetch("http://127.0.0.1:\(port)\(path)", through: nil)
                #expect(expected.count == 1_000_000)
                try await body(port, expected)
            }
        }
    }

    /// The body of a 200 answer to GET `url`, by a client of its own through `proxy`.
    static func fetch(_ url: String, through proxy: HTTPClient.Configuration.Proxy?) async throws -> [UInt8] {
        var configuration = HTTPClient.Configuration()
        configuration.proxy = proxy
        // By default a failed proxy handshake (407, 403) is retried with backoff until the
        // request's deadline, and only then thrown; fail at once instead.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
            #expect(response.status == .ok)
            let body = try await response.body.collect(upTo: 2_000_000)
            try await client.shutdown()
            return Array(buffer: body)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test func anHTTPProxyTunnelsAPlainDownloadWithConnect() async throws {
        try await Self.withOriginBytes { port, expected in
            let proxy = try await TestHTTPProxy()
            let bytes = try await Self.fetch("http://127.0.0.1:\(port)\(Self.path)", through: .server(host: "127.0.0.1", port: proxy.port))
            #expect(bytes == expected)
            #expect(proxy.entries.map(\.method) == ["CONNECT"])
            #expect(proxy.entries.map(\.target) == ["127.0.0.1:\(port)"])
            #expect(proxy.entries.first?.proxyAuthorization == nil)
            #expect(proxy.tunnelledBytes > 1_000_000)
            try await proxy.shutdown()
        }
    }

    @Test func anHTTPProxyWithCredentialsAdmitsOnlyThem() async throws {
        try await Self.withOriginBytes { port, expected in
            let proxy = try await TestHTTPProxy(credentials: ("user", "secret"))
            let url = "http://127.0.0.1:\(port)\(Self.path)"
            let authorized = HTTPClient.Configuration.Proxy.server(
                host: "127.0.0.1", port: proxy.port, authorization: .basic(username: "user", password: "secret")
            )
            #expect(try await Self.fetch(url, through: authorized) == expected)
            await #expect(throws: HTTPClientError.proxyAuthenticationRequired) {
                _ = try await Self.fetch(url, through: .server(host: "127.0.0.1", port: proxy.port))
            }
            let wrong = HTTPClient.Configuration.Proxy.server(
                host: "127.0.0.1", port: proxy.port, authorization: .basic(username: "user", password: "wrong")
            )
            await #expect(throws: HTTPClientError.proxyAuthenticationRequired) {
                _ = try await Self.fetch(url, through: wrong)
            }
            #expect(proxy.entries.map(\.proxyAuthorization) == ["Basic dXNlcjpzZWNyZXQ=", nil, "Basic dXNlcjp3cm9uZw=="])
            try await proxy.shutdown()
        }
    }

    @Test func aRefusingOrDroppingHTTPProxyFailsTheRequest() async throws {
        try await Self.withOriginBytes { port, _ in
            let url = "http://127.0.0.1:\(port)\(Self.path)"
            let refusing = try await TestHTTPProxy(mode: .refuse)
            await #expect(throws: HTTPClientError.invalidProxyResponse) {
                _ = try await Self.fetch(url, through: .server(host: "127.0.0.1", port: refusing.port))
            }
            #expect(refusing.entries.count == 1)
            #expect(refusing.tunnelledBytes == 0)
            try await refusing.shutdown()

            let dropping = try await TestHTTPProxy(mode: .dropAfterConnect)
            await #expect(throws: (any Error).self) {
                _ = try await Self.fetch(url, through: .server(host: "127.0.0.1", port: dropping.port))
            }
            #expect(dropping.entries.first?.method == "CONNECT")
            #expect(dropping.tunnelledBytes == 0)
            try await dropping.shutdown()
        }
    }

    /// AsyncHTTPClient never sends one, but other clients (curl) do.
    @Test func anHTTPProxyForwardsAnAbsoluteFormRequest() async throws {
        try await Self.withOriginBytes { port, expected in
            let proxy = try await TestHTTPProxy()
            let response = try await RawHTTPClient.request(
                port: proxy.port, path: "http://127.0.0.1:\(port)\(Self.path)", host: "127.0.0.1:\(port)")
            #expect(response.status == 200)
            #expect(response.body == expected)
            #expect(proxy.entries.map(\.method) == ["GET"])
            #expect(proxy.entries.map(\.target) == ["http://127.0.0.1:\(port)\(Self.path)"])
            try await proxy.shutdown()
        }
    }

    @Test func aSOCKS5ProxyTunnelsToAddressesAndNames() async throws {
        try await Self.withOriginBytes { port, expected in
            let proxy = try await TestSOCKS5Proxy()
            let socks = HTTPClient.Configuration.Proxy.socksServer(host: "127.0.0.1", port: proxy.port)
            #expect(try await Self.fetch("http://127.0.0.1:\(port)\(Self.path)", through: socks) == expected)
            #expect(try await Self.fetch("http://localhost:\(port)\(Self.path)", through: socks) == expected)
            #expect(proxy.targets == ["127.0.0.1:\(port)", "localhost:\(port)"])
            #expect(proxy.tunnelledBytes > 2_000_000)
            try await proxy.shutdown()
        }
    }

    @Test func aSOCKS5ProxyRefusesAClientThatRequiresAuthentication() async throws {
        let proxy = try await TestSOCKS5Proxy()
        // Version 5, one method: username/password.
        let answer = try await RawHTTPClient.exchange(port: proxy.port, request: [5, 1, 2], timeout: 5)
        #expect(answer == [5, 0xFF])
        #expect(proxy.targets.isEmpty)
        try await proxy.shutdown()
    }
}
