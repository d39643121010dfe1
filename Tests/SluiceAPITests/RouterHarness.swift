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
    /// The service's data directory.
    let data: String
    /// Every route as `METHOD /path/{parameter}`.
    let routeTable: [String]

    struct Reply: JSONReply {
        var status: Int
        var headers: HTTPFields
        var body: ByteBuffer

        var bodyData: Data { Data(body.readableBytesView) }

        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
    }

    /// The service (on SQLite, or on PostgreSQL in `scripts/test.sh`'s second run, as
    /// `ServiceHarness`) with every service but the HTTP server running, as in `sluice
    /// serve`, stopped in the same order after `body`.
    static func with(token: String? = nil, _ body: @Sendable (RouterHarness) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            let configuration = try ServiceHarness.configuration(data: data, token: token)
            var logger = Logger(label: "test-router")
            logger.logLevel = .critical
            try await withService(configuration: configuration, logger: logger) { service in
                let group = ServiceGroup(configuration: .init(services: service.servicesWithoutServer, logger: logger))
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    do {
                        try await Application(responder: service.routes).test(.router) { client in
                            try await body(RouterHarness(client: client, token: token, data: data, routeTable: service.routeTable))
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

    /// A request by its method's name, with exactly these headers (no token unless given),
    /// as `ServiceHarness.raw` sends one.
    func raw(_ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil) async throws -> Reply {
        guard let method = HTTPRequest.Method(method) else { throw RawHTTPClient.Failure(description: "no method \(method)") }
        var fields = HTTPFields()
        for (name, value) in headers { if let name = HTTPField.Name(name) { fields[name] = value } }
        if body != nil, fields[.contentType] == nil { fields[.contentType] = "application/json" }
        let response = try await client.execute(uri: path, method: method, headers: fields, body: body.map { ByteBuffer(string: $0) })
        return Reply(status: Int(response.status.code), headers: response.headers, body: response.body)
    }
}
