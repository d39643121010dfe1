import Dispatch
import NIOConcurrencyHelpers
import PostgresNIO

/// One connection leased from the `PostgresClient`'s pool and lent to a caller that waits on
/// its own thread (the store's calls are synchronous; see `JobRepository`).
///
/// The lease's task holds the connection without holding a thread (it suspends until the
/// caller gives it back); the caller waits for it until its deadline, and a caller that gave
/// up is never handed one (the lease ends at once).
final class ConnectionHandoff: Sendable {
    enum Taken {
        case connection(PostgresConnection)
        case failed(any Error)
        case timedOut
    }

    private enum State {
        case waiting
        case offered(PostgresConnection)
        case failed(any Error)
        case taken
        case abandoned
        case givenBack
    }

    private let state = NIOLockedValueBox(State.waiting)
    private let ready = DispatchSemaphore(value: 0)
    private let back = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)

    /// From the lease's task: false when the caller has given up (the connection goes back).
    func offer(_ connection: PostgresConnection) -> Bool {
        let offered = state.withLockedValue { state -> Bool in
            guard case .waiting = state else { return false }
            state = .offered(connection)
            return true
        }
        if offered { ready.signal() }
        return offered
    }

    /// From the lease's task: no connection could be leased.
    func fail(_ error: any Error) {
        let told = state.withLockedValue { state -> Bool in
            guard case .waiting = state else { return false }
            state = .failed(error)
            return true
        }
        if told { ready.signal() }
    }

    /// From the caller: the connection, or why none came by `deadline`.
    func take(until deadline: DispatchTime) -> Taken {
        _ = ready.wait(timeout: deadline)
        return state.withLockedValue { state in
            switch state {
            case .offered(let connection):
                state = .taken
                return .connection(connection)
            case .failed(let error):
                return .failed(error)
            default:
                state = .abandoned
                return .timedOut
            }
        }
    }

    /// From the caller, once done with the connection: the lease ends.
    func giveBack() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            state = .givenBack
            return back.withLockedValue { waiter in
                defer { waiter = nil }
                return waiter
            }
        }
        waiter?.resume()
    }

    /// From the lease's task: suspends until the caller gives the connection back.
    func returned() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLockedValue { state -> Bool in
                if case .givenBack = state { return true }
                back.withLockedValue { $0 = continuation }
                return false
            }
            if already { continuation.resume() }
        }
    }
}
