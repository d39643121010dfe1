import Foundation
public import SluiceCore
import Synchronization

/// A change the live event streams carry (CONTRACT §3).
public enum JobEvent: Sendable, Equatable {
    case job(JobSnapshot)
    case removed(id: String)

    public var jobID: String {
        switch self {
        case .job(let job): job.id
        case .removed(let id): id
        }
    }
}

/// An event as every subscriber receives it: encoded once, when it is published, not once
/// per open event stream.
public struct JobEventMessage: Sendable {
    public let event: JobEvent
    /// `job` or `removed` (the SSE event name).
    public let name: String
    /// The job's JSON, or `{"id":…}` for a removal, on one line.
    public let data: String

    public init(_ event: JobEvent) {
        self.event = event
        switch event {
        case .job(let job):
            name = "job"
            data = job.json.text
        case .removed(let id):
            name = "removed"
            data = JSONValue.object([("id", .string(id))]).text
        }
    }
}

/// Fans job events out to every subscriber. A slow subscriber loses its oldest events
/// rather than making the service buffer without bound.
public final class JobEventBroadcaster: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<JobEventMessage>.Continuation]>([:])

    public init() {}

    func subscribe() -> AsyncStream<JobEventMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: JobEventMessage.self, bufferingPolicy: .bufferingNewest(4096))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func publish(_ event: JobEvent) {
        let continuations = subscribers.withLock { Array($0.values) }
        guard !continuations.isEmpty else { return }
        let message = JobEventMessage(event)
        for continuation in continuations {
            continuation.yield(message)
        }
    }

    /// Ends every stream (at shutdown).
    func finishAll() {
        for continuation in subscribers.withLock({ Array($0.values) }) {
            continuation.finish()
        }
    }
}
