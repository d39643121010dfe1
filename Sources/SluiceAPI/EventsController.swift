import JobService
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import SluiceCore
import SluiceHTTP

/// `GET /events` and `GET /jobs/ID/events`: Server-Sent Events (docs/api.md, "Events").
struct EventsController {
    let jobs: any JobService
    let tokens: TokenRegistry
    var keepAlive: Duration = .seconds(15)
    /// How often a stream opened with a named token asks whether the token still stands.
    var tokenCheck: Duration = .seconds(1)

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.get("/events") { request, context in
            try await stream(jobID: nil, request: request, connection: context.channel, namedToken: context.namedToken)
        }
        router.get("/jobs/:id/events") { request, context in
            try await stream(
                jobID: try JobsController.id(context), request: request, connection: context.channel, namedToken: context.namedToken)
        }
        router.allowOnly([.get], at: "/events")
        router.allowOnly([.get], at: "/jobs/:id/events")
    }

    /// Every event carries an `id:`. A client that reconnects with `Last-Event-ID` (as
    /// `EventSource` does by itself) is sent the events it missed, or `event: reset` and a
    /// snapshot when the service no longer has them. One that stops reading is held to a
    /// bounded queue (`JobEventBroadcaster.subscriberLimit`), then its connection is reset:
    /// its writer, waiting for the client to read, would otherwise hold the stream open and
    /// the bytes already handed to it.
    /// A stream opened with a named token ends within `tokenCheck` of the token's
    /// revocation (issue 35): what a revoked token opened does not outlive it.
    func stream(jobID: String?, request: Request, connection: any Channel, namedToken: String? = nil) async throws -> Response {
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
        let subscription = try await jobs.subscribe(jobID: jobID, lastEventID: lastEventID)
        let keepAlive = self.keepAlive
        let tokens = self.tokens
        let tokenCheck = self.tokenCheck
        // The origin's fast path raises the connection's high-water mark to 1 MiB for file
        // ranges; a stream keeps NIO's usual 64 KiB, so that a client that stops reading
        // makes the writer wait (and the queue fill) after little is buffered for it.
        // Only a socket's: an HTTP/2 stream channel traps on any option but auto-read (a GET
        // /events over h2 stopped the whole service), and its flow control bounds it anyway.
        if connection is any SocketOptionProvider {
            _ = connection.setOption(.writeBufferWaterMark, value: .init(low: 32 << 10, high: 64 << 10))
        }
        let body = ResponseBody { writer in
            let changes = subscription.changes
            defer { changes.cancel() }
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            if subscription.reset {
                try await writer.write(ByteBuffer(string: "event: reset\ndata: {}\n\n"))
            }
            for message in subscription.initial {
                try await writer.write(Self.frame(message))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    while true {
                        try await Task.sleep(for: keepAlive)
                        changes.keepAlive()
                    }
                }
                group.addTask {
                    if await changes.overflowed() { await Self.reset(connection) }
                }
                if let namedToken {
                    group.addTask {
                        while await tokens.isValid(digest: namedToken) {
                            try await Task.sleep(for: tokenCheck)
                        }
                        changes.finish()
                    }
                }
                defer { group.cancelAll() }
                // Graceful shutdown ends the stream, so an open dashboard never delays a stop.
                try await withGracefulShutdownHandler {
                    loop: while true {
                        switch await changes.next() {
                        case .events(let messages):
                            let sent = messages.filter { jobID == nil || $0.event.jobID == jobID }
                            var buffer = ByteBuffer()
                            buffer.reserveCapacity(sent.reduce(0) { $0 + Self.frameSize($1) })
                            var ended = false
                            for message in sent {
                                Self.write(message, to: &buffer)
                                if case .removed = message.event, jobID != nil { ended = true }
                            }
                            if buffer.readableBytes > 0 { try await writer.write(buffer) }
                            if ended { break loop }
                        case .keepAlive:
                            try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        case .overflowed, .finished:
                            break loop
                        }
                    }
                } onGracefulShutdown: {
                    changes.finish()
                }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: body
        )
    }

    /// `event: job` with the job JSON on one line, or `event: removed` with its id: the
    /// JSON was encoded once for every stream.
    static func frame(_ message: JobEventMessage) -> ByteBuffer {
        var buffer = ByteBuffer()
        write(message, to: &buffer)
        return buffer
    }

    static func frameSize(_ message: JobEventMessage) -> Int {
        "id: \nevent: \ndata: \n\n".utf8.count + message.id.utf8.count + message.name.utf8.count + message.data.utf8.count
    }

    static func write(_ message: JobEventMessage, to buffer: inout ByteBuffer) {
        buffer.writeString("id: ")
        buffer.writeString(message.id)
        buffer.writeString("\nevent: ")
        buffer.writeString(message.name)
        buffer.writeString("\ndata: ")
        buffer.writeString(message.data)
        buffer.writeString("\n\n")
    }

    /// Ends a stream whose client stopped reading: a reset (linger 0) also drops what the
    /// kernel still holds for it, instead of keeping it until the client's window opens.
    /// Over HTTP/2 the stream alone is reset.
    static func reset(_ connection: any Channel) async {
        if let socket = connection as? any SocketOptionProvider {
            try? await socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await connection.close()
    }
}
