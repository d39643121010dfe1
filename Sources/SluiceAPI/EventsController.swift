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

    private enum Item: Sendable {
        case event(JobEventMessage)
        case keepAlive
    }

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.get("/events") { _, _ in try await stream(jobID: nil) }
        router.get("/jobs/:id/events") { _, context in try await stream(jobID: try JobsController.id(context)) }
        router.allowOnly([.get], at: "/events")
        router.allowOnly([.get], at: "/jobs/:id/events")
    }

    func stream(jobID: String?) async throws -> Response {
        let (initial, changes) = try await jobs.subscribe(jobID: jobID)
        let keepAlive = self.keepAlive
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            for job in initial {
                try await writer.write(Self.frame(JobEventMessage(.job(job))))
            }
            let (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingNewest(4096))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in changes where jobID == nil || message.event.jobID == jobID {
                        continuation.yield(.event(message))
                        if case .removed = message.event, jobID != nil { break }
                    }
                    continuation.finish()
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: keepAlive)
                        continuation.yield(.keepAlive)
                    }
                }
                defer { group.cancelAll() }
                // Graceful shutdown ends the stream, so an open dashboard never delays a stop.
                for await item in items.cancelOnGracefulShutdown() {
                    switch item {
                    case .event(let message): try await writer.write(Self.frame(message))
                    case .keepAlive: try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    }
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
        ByteBuffer(string: "event: \(message.name)\ndata: \(message.data)\n\n")
    }
}
