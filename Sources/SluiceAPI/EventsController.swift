import JobService
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import SluiceCore
import SluiceHTTP

/// `GET /events` and `GET /jobs/ID/events`: Server-Sent Events (CONTRACT §3).
struct EventsController {
    let jobs: any JobService
    var keepAlive: Duration = .seconds(15)

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.get("/events") { request, _ in try await stream(jobID: nil, request: request) }
        router.get("/jobs/:id/events") { request, context in try await stream(jobID: try JobsController.id(context), request: request) }
        router.allowOnly([.get], at: "/events")
        router.allowOnly([.get], at: "/jobs/:id/events")
    }

    /// Every event carries an `id:`. A client that reconnects with `Last-Event-ID` (as
    /// `EventSource` does by itself) is sent the events it missed, or `event: reset` and a
    /// snapshot when the service no longer has them. One that stops reading is held to a
    /// bounded queue (`JobEventBroadcaster.subscriberLimit`), then its stream ends.
    func stream(jobID: String?, request: Request) async throws -> Response {
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
        let subscription = try await jobs.subscribe(jobID: jobID, lastEventID: lastEventID)
        let keepAlive = self.keepAlive
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
                defer { group.cancelAll() }
                // Graceful shutdown ends the stream, so an open dashboard never delays a stop.
                try await withGracefulShutdownHandler {
                    loop: while true {
                        switch await changes.next() {
                        case .events(let messages):
                            var buffer = ByteBuffer()
                            var ended = false
                            for message in messages where jobID == nil || message.event.jobID == jobID {
                                buffer.writeImmutableBuffer(Self.frame(message))
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
        ByteBuffer(string: "id: \(message.id)\nevent: \(message.name)\ndata: \(message.data)\n\n")
    }
}
