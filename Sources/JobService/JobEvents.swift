import Foundation
import SluiceCore
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

/// Fans job events out to every subscriber. A slow subscriber loses its oldest events
/// rather than making the service buffer without bound.
public final class JobEventBroadcaster: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<JobEvent>.Continuation]>([:])

    public init() {}

    func subscribe() -> AsyncStream<JobEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: JobEvent.self, bufferingPolicy: .bufferingNewest(4096))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func publish(_ event: JobEvent) {
        for continuation in subscribers.withLock({ Array($0.values) }) {
            continuation.yield(event)
        }
    }

    /// Ends every stream (at shutdown).
    func finishAll() {
        for continuation in subscribers.withLock({ Array($0.values) }) {
            continuation.finish()
        }
    }
}
