import Aria2RPC
public import JobService
public import ServiceLifecycle
import SluiceCore
import Synchronization

/// aria2's notifications for every WebSocket client at once: one subscription to the job
/// service, one `Aria2Notifications` deciding which change is which notification, and each
/// notification's text handed to every client. A client that connects costs a place in
/// a table, whatever the number of jobs: the upgrade needs no token (browsers cannot send
/// one), and when each built its own snapshot of up to 1,000 jobs, a few seconds of
/// upgrades took the store away from everything else (issue 35, finding 5).
///
/// A Service: it subscribes when the service starts and stops at its graceful shutdown,
/// ending every client's notifications. A client whose queue of notifications fills
/// (it stopped reading) is dropped: its stream ends and its WebSocket is closed.
public final class Aria2NotificationHub: Service, Sendable {
    let jobs: any JobService
    private let state = Mutex(State())
    /// Notifications held for a client that does not read, at most.
    static let clientQueue = 4096

    struct State {
        var clients: [UInt64: AsyncStream<String>.Continuation] = [:]
        var next: UInt64 = 0
        var stopped = false
        /// The subscription followed now: a stop finishes it.
        var following: JobEventSubscriber?
    }

    public init(jobs: any JobService) {
        self.jobs = jobs
    }

    /// A new client's notifications, as JSON-RPC texts, until it leaves, falls behind or
    /// the service stops.
    func join() -> (id: UInt64, notifications: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.clientQueue))
        let id: UInt64? = state.withLock { state in
            guard !state.stopped else { return nil }
            let id = state.next
            state.next += 1
            state.clients[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return (0, stream)
        }
        return (id, stream)
    }

    func leave(_ id: UInt64) {
        state.withLock { $0.clients.removeValue(forKey: id) }?.finish()
    }

    public func run() async throws {
        defer { stop() }
        try await withGracefulShutdownHandler {
            while !Task.isCancelled, !isStopped {
                // A subscription that ends (the hub fell behind, or the store was away)
                // is made again, its snapshot the new starting point.
                guard let subscription = try? await jobs.subscribe(jobID: nil, lastEventID: nil) else {
                    try await Task.sleep(for: .seconds(1))
                    continue
                }
                let ended = await follow(subscription)
                if ended { return }
            }
        } onGracefulShutdown: {
            self.stop()
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Sends the notifications of one subscription; true when the job service finished it
    /// (its shutdown) or the hub stopped.
    private func follow(_ subscription: JobSubscription) async -> Bool {
        let changes = subscription.changes
        defer { changes.cancel() }
        let stopped = state.withLock { state in
            state.following = changes
            return state.stopped
        }
        if stopped { return true }
        var notifications = Aria2Notifications()
        for message in subscription.initial {
            if case .job(let job) = message.event { notifications.seed(job) }
        }
        while true {
            switch await changes.next() {
            case .events(let messages):
                for message in messages {
                    let method: String?
                    switch message.event {
                    case .job(let job): method = notifications.change(job)
                    case .removed(let id): method = notifications.removed(id: id)
                    }
                    if let method { broadcast(Aria2Notifications.message(method, jobID: message.event.jobID).text) }
                }
            case .keepAlive: continue
            case .overflowed: return false
            case .finished: return true
            }
        }
    }

    /// Hands `text` to every client; one whose queue is full is dropped.
    private func broadcast(_ text: String) {
        let dropped = state.withLock { state -> [AsyncStream<String>.Continuation] in
            var dropped: [AsyncStream<String>.Continuation] = []
            for (id, client) in state.clients {
                if case .dropped = client.yield(text) {
                    dropped.append(client)
                    state.clients[id] = nil
                }
            }
            return dropped
        }
        for client in dropped { client.finish() }
    }

    private func stop() {
        let (clients, following) = state.withLock { state in
            state.stopped = true
            defer {
                state.clients = [:]
                state.following = nil
            }
            return (Array(state.clients.values), state.following)
        }
        following?.finish()
        for client in clients { client.finish() }
    }
}
