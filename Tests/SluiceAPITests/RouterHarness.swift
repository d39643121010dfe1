import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JobService
import Logging
import NIOCore
import NIOEmbedded
import SluiceAPI
import SluiceCore
import SluiceServer
import ServiceLifecycle
import SluiceTestSupport

/// The service's routes driven in-process (Hummingbird's `app.test(.router)`): the real
/// job service and SQLite store in a temporary data directory, no socket. Downloads run on
/// `TestDataEngine`, which plays the Range origin's test files in process. For API behaviour
/// where a connection adds nothing; `ServiceHarness` keeps the socket (and the real engine)
/// for the rest.
struct RouterHarness: APIHarness {
    let client: any TestClientProtocol
    let token: String?
    /// The service's data directory.
    let data: String
    /// Every route as `METHOD /path/{parameter}`.
    let routeTable: [String]
    /// The job service behind the API, for what a test must cause that no request can.
    let jobs: any JobService
    /// The routes themselves, for answers read as they are written (`stream`).
    let responder: RouterResponder<SluiceRequestContext>

    struct Reply: JSONReply {
        var status: Int
        var headers: HTTPFields
        var body: Data

        var bodyData: Data { body }

        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
    }

    /// The service (on SQLite, or on PostgreSQL in `scripts/test.sh`'s second run, as
    /// `ServiceHarness`) with every service but the HTTP server running, as in `sluice
    /// serve`, stopped in the same order after `body`. The parameters are `ServiceHarness`'s.
    static func with(
        token: String? = nil, maxActive: Int = 3, dataDirectory: String? = nil, limitRate: Int64? = nil,
        configure: @Sendable (inout ServiceConfiguration) -> Void = { _ in },
        _ body: @Sendable (RouterHarness) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let data = dataDirectory ?? directory.path + "/data"
            var configuration = try ServiceHarness.configuration(data: data, token: token, maxActive: maxActive, limitRate: limitRate)
            configuration.engine = TestDataEngine(files: configuration.originRoot)
            configure(&configuration)
            var logger = Logger(label: "test-router")
            logger.logLevel = .critical
            try await withService(configuration: configuration, logger: logger) { service in
                let group = ServiceGroup(configuration: .init(services: service.servicesWithoutServer, logger: logger))
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    do {
                        try await Application(responder: service.routes).test(.router) { client in
                            let harness = RouterHarness(
                                client: client, token: token, data: data, routeTable: service.routeTable, jobs: service.jobs,
                                responder: service.routes)
                            try await body(harness)
                            await harness.expectPlainErrors()
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

    /// No socket answers here: `TestDataEngine` plays the origin for the URL's path.
    func testdata(_ path: String) -> String { "http://127.0.0.1:9" + path }

    func call(_ method: HTTPRequest.Method, _ path: String, json: String?, contentType: String?, authorized: Bool) async throws -> Reply {
        try await request(method, path, json: json, contentType: contentType, authorized: authorized)
    }

    func request(
        _ method: HTTPRequest.Method, _ path: String, json: String? = nil, contentType: String? = "application/json",
        headers extra: [String: String] = [:], authorized: Bool = true
    ) async throws -> Reply {
        var headers = Self.fields(extra)
        if authorized, let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil, let contentType { headers[.contentType] = contentType }
        let response = try await client.execute(
            uri: path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }
        )
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(response.body.readableBytesView))
    }

    /// A request by its method's name, with exactly these headers (no token unless given or
    /// `authorized`), as `ServiceHarness.raw` sends one, to `host` (the HTTP/1 `Host`).
    func raw(
        _ method: String, _ path: String, host: String = "localhost", headers: [String: String] = [:], body: String? = nil,
        authorized: Bool = false
    ) async throws -> Reply {
        guard let method = HTTPRequest.Method(method) else { throw RawHTTPClient.Failure(description: "no method \(method)") }
        var fields = Self.fields(headers)
        if authorized, let token { fields[.authorization] = "Bearer \(token)" }
        if let body {
            if fields[.contentType] == nil { fields[.contentType] = "application/json" }
            fields[.contentLength] = String(body.utf8.count)
        }
        let answer = try await answer(method, path, host: host, headers: fields, body: body.map { ByteBuffer(string: $0) })
        var collected = Data()
        for try await chunk in answer.body { collected.append(contentsOf: chunk.readableBytesView) }
        return Reply(status: answer.status, headers: answer.headers, body: collected)
    }

    /// `raw` with the headers before the host, as call sites read best.
    func raw(_ method: String, _ path: String, headers: [String: String], host: String) async throws -> Reply {
        try await raw(method, path, host: host, headers: headers)
    }

    private static func fields(_ headers: [String: String]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in headers { if let name = HTTPField.Name(name) { fields[name] = value } }
        return fields
    }
}

extension RouterHarness {
    /// An answer whose body is read as the route writes it: an event stream, which the test
    /// framework's client would wait for to end.
    struct StreamedReply {
        var status: Int
        var headers: HTTPFields
        var body: AsyncThrowingStream<ByteBuffer, any Error>

        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
    }

    /// `GET path`, its body read as the route writes it; it streams until the route ends it
    /// or the reply is dropped.
    func stream(_ path: String, headers extra: [String: String] = [:], authorized: Bool = true) async throws -> StreamedReply {
        var headers = Self.fields(extra)
        if authorized, let token { headers[.authorization] = "Bearer \(token)" }
        return try await answer(.get, path, host: "localhost", headers: headers, body: nil)
    }

    /// A request through the routes and their middleware as the server runs them: an error
    /// a route throws becomes its response (a 500 for one that is not an HTTP error).
    private func answer(
        _ method: HTTPRequest.Method, _ path: String, host: String, headers: HTTPFields, body: ByteBuffer?
    ) async throws -> StreamedReply {
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: host, path: path, headerFields: headers),
            body: RequestBody(buffer: body ?? ByteBuffer()))
        let context = SluiceRequestContext(source: .init(channel: NIOAsyncTestingChannel(), logger: Logger(label: "test-router")))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            response = Response(status: .internalServerError)
        }
        let (stream, sink) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        let writing = Task {
            do {
                try await response.body.write(StreamSink(sink: sink))
                sink.finish()
            } catch {
                sink.finish(throwing: error)
            }
        }
        sink.onTermination = { _ in writing.cancel() }
        return StreamedReply(status: Int(response.status.code), headers: response.headers, body: stream)
    }

    /// Hands what a route writes to a stream.
    private struct StreamSink: ResponseBodyWriter {
        let sink: AsyncThrowingStream<ByteBuffer, any Error>.Continuation

        func write(_ buffer: ByteBuffer) async throws { sink.yield(buffer) }

        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    /// The job events `/events` (or `/jobs/{id}/events`) streams, read in process: the same
    /// messages, from the job service's own subscription.
    func events(jobID: String? = nil) async throws -> ServiceEvents {
        let subscription = try await jobs.subscribe(jobID: jobID, lastEventID: nil)
        return ServiceEvents(subscriber: subscription.changes, pending: subscription.initial)
    }
}

/// A subscription to the job service's events, read one event at a time as `EventReader`
/// reads the SSE stream.
struct ServiceEvents {
    let subscriber: JobEventSubscriber
    var pending: [JobEventMessage]

    /// The next event's name and data; nil when the subscription ends.
    mutating func next() async -> (event: String, data: [String: Any])? {
        while pending.isEmpty {
            switch await subscriber.next() {
            case .events(let messages): pending = messages
            case .keepAlive: continue
            case .overflowed, .finished: return nil
            }
        }
        let message = pending.removeFirst()
        let data = (try? JSONSerialization.jsonObject(with: Data(message.data.utf8))) as? [String: Any] ?? [:]
        return (message.name, data)
    }

    /// Reads events until one satisfies `condition`.
    mutating func until(_ condition: (String, [String: Any]) -> Bool) async throws -> (event: String, data: [String: Any]) {
        while let event = await next() {
            if condition(event.event, event.data) { return event }
        }
        throw RawHTTPClient.Failure(description: "the events ended")
    }
}
