import AsyncHTTPClient
import NIOCore
import NIOPosix

/// The HTTP client downloads share: HTTP/1 only (parallel ranges over HTTP/2 would share
/// one connection), up to 16 connections per host, redirects followed up to 10 times,
/// and a read timeout that turns a stalled connection into an error.
public enum HTTPClientFactory {
    public static func make(stallTimeout: Double = 30, connectionsPerHost: Int = 16) -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 10, allowCycles: false),
            timeout: .init(connect: .seconds(10), read: .milliseconds(Int64(stallTimeout * 1000))),
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost),
            ignoreUncleanSSLShutdown: false,
            decompression: .disabled
        )
        configuration.httpVersion = .http1Only
        // A refused connection is one failure for the engine's own backoff, not ten seconds
        // of silent retries inside the pool.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }
}
