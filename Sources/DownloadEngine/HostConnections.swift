import SluiceCore
import Synchronization

/// The connections every download of the service has open to each `host:port`, never
/// more than `limit` to one (`--max-connections-per-host`). A download waits only for its
/// first connection; it takes what else is free for its other workers, and more later as
/// other downloads give theirs back — fewer workers rather than waiting.
///
/// A freed slot goes first to a download waiting for its first connection, then to those
/// that would like more (`waitForFreeSlot`, then `tryAcquire`).
public final class HostConnections: Sendable {
    public let limit: Int
    private let state = Mutex(State())
    /// Called with the host and its new count after every change (metrics).
    private let onChange: @Sendable (String, Int) -> Void

    private struct State {
        var inUse: [String: Int] = [:]
        var nextID: UInt64 = 0
        /// Downloads waiting for their first connection, oldest first.
        var firstWaiters: [(id: UInt64, host: String, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Downloads that would take more connections when one frees.
        var moreWaiters: [(id: UInt64, host: String, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    public init(limit: Int, onChange: @escaping @Sendable (String, Int) -> Void = { _, _ in }) {
        self.limit = max(1, limit)
        self.onChange = onChange
    }

    /// The key connections to `url` count under: its origin's host and port.
    public static func key(for url: String) -> String {
        guard let origin = URLOrigin(url) else { return url }
        return (origin.host.contains(":") ? "[\(origin.host)]" : origin.host) + ":\(origin.port)"
    }

    /// Open connections by host, those with none left out.
    public var inUse: [String: Int] { state.withLock { $0.inUse.filter { $0.value > 0 } } }

    /// Downloads waiting for a first connection, and those waiting to take more.
    public var waiting: (first: Int, more: Int) { state.withLock { ($0.firstWaiters.count, $0.moreWaiters.count) } }

    /// One connection to `host`, waiting until one is free. Cancellation stops the wait.
    public func acquire(_ host: String) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        var count: Int?
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let granted = state.withLock { state -> Grant in
                    if Task.isCancelled { return .cancelled }
                    if state.inUse[host, default: 0] < limit {
                        state.inUse[host, default: 0] += 1
                        return .granted(state.inUse[host, default: 0])
                    }
                    state.firstWaiters.append((id, host, continuation))
                    return .waiting
                }
                switch granted {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .granted(let value):
                    count = value
                    continuation.resume()
                case .waiting: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.firstWaiters.firstIndex { $0.id == id }.map { state.firstWaiters.remove(at: $0).continuation }
            }
            waiter?.resume(throwing: CancellationError())
        }
        if let count { onChange(host, count) }
    }

    private enum Grant {
        case granted(Int)
        case waiting
        case cancelled
    }

    /// Up to `wanted` connections to `host` that are free now, without waiting: how many.
    public func tryAcquire(_ host: String, upTo wanted: Int) -> Int {
        guard wanted > 0 else { return 0 }
        let (granted, count) = state.withLock { state -> (Int, Int) in
            // Downloads waiting for their first connection come first.
            guard !state.firstWaiters.contains(where: { $0.host == host }) else { return (0, state.inUse[host, default: 0]) }
            let granted = min(wanted, max(0, limit - state.inUse[host, default: 0]))
            state.inUse[host, default: 0] += granted
            return (granted, state.inUse[host, default: 0])
        }
        if granted > 0 { onChange(host, count) }
        return granted
    }

    /// Returns when a connection to `host` may be free (then `tryAcquire` it): at once if one
    /// is, else when one is given back. Cancellation ends the wait.
    public func waitForFreeSlot(_ host: String) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state -> Bool? in
                    if Task.isCancelled { return nil }
                    if state.inUse[host, default: 0] < limit { return true }
                    state.moreWaiters.append((id, host, continuation))
                    return false
                }
                switch ready {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.moreWaiters.firstIndex { $0.id == id }.map { state.moreWaiters.remove(at: $0).continuation }
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Gives one connection to `host` back: to a download waiting for its first, else free,
    /// and every download that would take more is told.
    public func release(_ host: String) {
        let (handedOver, told, count) = state.withLock { state in
            if let index = state.firstWaiters.firstIndex(where: { $0.host == host }) {
                let waiter = state.firstWaiters.remove(at: index)
                return (Optional(waiter.continuation), [CheckedContinuation<Void, any Error>](), state.inUse[host, default: 0])
            }
            state.inUse[host, default: 0] = max(0, state.inUse[host, default: 0] - 1)
            let told = state.moreWaiters.filter { $0.host == host }.map(\.continuation)
            state.moreWaiters.removeAll { $0.host == host }
            if state.inUse[host] == 0 { state.inUse[host] = nil }
            return (nil, told, state.inUse[host, default: 0])
        }
        handedOver?.resume()
        for waiter in told { waiter.resume() }
        if handedOver == nil { onChange(host, count) }
    }
}
