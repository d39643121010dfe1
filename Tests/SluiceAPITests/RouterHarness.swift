import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SluiceAPI
import SluiceCore
import SluiceServer
import ServiceLifecycle
import SluiceTestSupport

/// The service's routes driven in-process (Hummingbird's `app.test(.router)`): the real
/// job service and SQLite store in a temporary data directory, no socket. For API behaviour
/// where a connection adds nothing; `ServiceHarness` keeps the socket for the rest.
struct RouterHarness: Sendable {
    let client: any TestClientProtocol
    let token: String?

    struct Reply: JSONReply {
        var status: Int
        var headers: HTTPFields
        var body: ByteBuffer

        var bodyData: Data { Data(body.readableBytesView) }
    }

    static func with(token: String? = nil, _ body: @Sendable (RouterHarness) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            var configuration = ServiceConfiguration(
                host: "127.0.0.1", port: 0, dataDirectory: directory.path + "/data", token: token,
                retry: RetryPolicy(base: 0.02, maximum: 0.1), stallTimeout: 5
            )
            configuration.publicDirectory = ServiceHarness.repositoryPublic
            var logger = Logger(label: "test-router")
            logger.logLevel = .critical
            let service = try await buildService(configuration: configuration, logger: logger)
            // Every service but the HTTP server runs, as in `sluice serve`, and stops in the
            // same order.
            let group = ServiceGroup(configuration: .init(services: service.servicesWithoutServer, logger: logger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                do {
                    try await Application(responder: service.routes).test(.router) { client in
                        try await body(RouterHarness(client: client, token: token))
                    }
                } catch {
                    await group.triggerGracefulShutdown()
                    throw error
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
    }

    func request(
        _ method: HTTPRequest.Method, _ path: String, json: String? = nil, contentType: String? = "application/json",
        headers extra: HTTPFields = [:], authorized: Bool = true
    ) async throws -> Reply {
        var headers = extra
        if authorized, let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil, let contentType { headers[.contentType] = contentType }
        let response = try await client.execute(
            uri: path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }
        )
        return Reply(status: Int(response.status.code), headers: response.headers, body: response.body)
    }
}
