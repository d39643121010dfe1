import AsyncHTTPClient
import Crypto
import DownloadEngine
import JobService
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SluiceAPI
import SluiceServer
import SluiceCore
import SluiceTestSupport
import Testing

/// The whole service running in-process on 127.0.0.1:0 with a real SQLite file in a
/// temporary data directory, plus a client to talk to it.
struct ServiceHarness: APIHarness {
    /// The suites run again with each service on a PostgreSQL database (`scripts/test.sh`):
    /// a test of the SQLite store's own file says so with `.disabled(if: onPostgres, …)`.
    static var onPostgres: Bool { ProcessInfo.processInfo.environment["SLUICE_TEST_STORE"] == "postgres" }

    /// The services' store budget: 2 s (docs/job-service.md, "Store calls"), or
    /// `SLUICE_TEST_STORE_BUDGET` seconds. The cluster API pass (`scripts/test.sh`) is not
    /// about store outages and sets more: under its load a healthy PostgreSQL's round trips
    /// added up past 2 s now and then.
    static var storeBudget: Duration {
        guard let text = ProcessInfo.processInfo.environment["SLUICE_TEST_STORE_BUDGET"], let seconds = Int(text), seconds > 0 else {
            return StoreCallBudget.request
        }
        return .seconds(seconds)
    }

    let base: String
    let data: String
    let client: HTTPClient
    let token: String?
    /// The job service behind the API, for what a test must cause that no request can.
    let jobs: any JobService
    /// Every route as `METHOD /path/{parameter}`.
    let routeTable: [String]

    struct Reply: JSONReply {
        var status: Int
        var headers: HTTPHeaders
        var body: Data

        var bodyData: Data { body }

        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// Runs the service for the duration of `body`. `dataDirectory` lets a test start a
    /// second service on the data of a first.
    static func with(
        token: String? = nil, maxActive: Int = 3, dataDirectory: String? = nil, limitRate: Int64? = nil,
        configure: @Sendable (inout ServiceConfiguration) -> Void = { _ in },
        _ body: @Sendable (ServiceHarness) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let data = dataDirectory ?? directory.path + "/data"
            var configuration = try Self.configuration(data: data, token: token, maxActive: maxActive, limitRate: limitRate)
            configure(&configuration)
            var logger = Logger(label: "test-service")
            logger.logLevel = .critical
            let (urls, continuation) = AsyncStream.makeStream(of: String.self)
            try await withService(configuration: configuration, logger: logger) { url in
                continuation.yield(url)
                continuation.finish()
            } _: { service in
                // Stopped gracefully, error or not: a cancelled server traps on the connections
                // it accepted and has not served (see `withRunningServer`).
                var groupConfiguration = ServiceGroupConfiguration(services: service.services, logger: logger)
                groupConfiguration.maximumGracefulShutdownDuration = .seconds(10)
                let group = ServiceGroup(configuration: groupConfiguration)
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    var iterator = urls.makeAsyncIterator()
                    guard let base = await iterator.next() else { throw CancellationError() }
                    do {
                        let harness = ServiceHarness(
                            base: base, data: data, client: client, token: token, jobs: service.jobs, routeTable: service.routeTable)
                        try await body(harness)
                        await harness.expectPlainErrors()
                    } catch {
                        await group.triggerGracefulShutdown()
                        try? await tasks.waitForAll()
                        try? await client.shutdown()
                        throw error
                    }
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                    try await client.shutdown()
                }
            }
        }
    }

    /// The service the API tests run, on the data directory `data`: on SQLite, or on a
    /// PostgreSQL database of its own when `scripts/test.sh` runs the suites again so.
    static func configuration(data: String, token: String?, maxActive: Int = 3, limitRate: Int64? = nil) throws -> ServiceConfiguration {
        var configuration = ServiceConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: data, maxActive: maxActive, token: token, limitRate: limitRate,
            retry: RetryPolicy(base: 0.02, maximum: 0.1), stallTimeout: 5
        )
        configuration.originRoot = data + "/documents"
        configuration.publicDirectory = Self.repositoryPublic
        if onPostgres { configuration.store = try PostgresLocation(TestPostgres.database(for: data)) }
        configuration.storeBudget = storeBudget
        return configuration
    }

    func request(
        _ method: HTTPMethod, _ path: String, json: String? = nil, contentType: String? = "application/json",
        headers: [String: String] = [:], authorized: Bool = true
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if authorized, let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }

    func testdata(_ path: String) -> String { base + path }

    func call(_ method: HTTPRequest.Method, _ path: String, json: String?, contentType: String?, authorized: Bool) async throws -> Reply {
        try await request(HTTPMethod(rawValue: method.rawValue), path, json: json, contentType: contentType, authorized: authorized)
    }

    var port: Int { Int(base.split(separator: ":").last!)! }

    /// A request sent as raw bytes, path and `Host` exactly as given, token included when
    /// `authorized`.
    func raw(
        _ method: String, _ path: String, host: String? = nil, headers: [String: String] = [:], body: String? = nil,
        authorized: Bool = false
    ) async throws -> RawHTTPResponse {
        var headers = headers
        if authorized, let token { headers["Authorization"] = "Bearer \(token)" }
        if body != nil, headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        return try await RawHTTPClient.request(port: port, method: method, path: path, host: host, headers: headers, body: body)
    }

    /// The repository's `public/`, found from this file's path.
    static let repositoryPublic = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("public").path

    static func expectedSHA256(size: Int64, seed: UInt64 = 0) -> String {
        var hasher = SHA256()
        var offset: Int64 = 0
        while offset < size {
            let count = min(1 << 20, size - offset)
            hasher.update(data: TestDataContent(seed: seed).bytes(offset..<(offset + count)))
            offset += count
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
