import NIOConcurrencyHelpers

/// One awaited call to PostgreSQL racing its deadline: whichever comes first — the answer or
/// the deadline — resumes the caller, once; the other finds it done.
///
/// A call gives up on a connection that has not come by its deadline (`timedOut`), and a
/// connection that comes after that goes back unused (`leased` answers false).
final class LeaseRace<T: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<T, any Error>)
        /// The connection came (or the call needs none): only the answer or the deadline is left.
        case leased(CheckedContinuation<T, any Error>)
        /// The deadline came before the caller waited.
        case expired(any Error)
        case done
    }

    private let state = NIOLockedValueBox(State.idle)

    /// The caller waits from now on.
    func waiting(_ continuation: CheckedContinuation<T, any Error>) {
        let expired = state.withLockedValue { state -> (any Error)? in
            switch state {
            case .idle:
                state = .waiting(continuation)
                return nil
            case .expired(let error):
                state = .done
                return error
            default:
                return nil
            }
        }
        if let expired { continuation.resume(throwing: expired) }
    }

    /// The connection came: false when the caller has given up already.
    func leased() -> Bool {
        state.withLockedValue { state in
            guard case .waiting(let continuation) = state else { return false }
            state = .leased(continuation)
            return true
        }
    }

    /// The answer: resumes the caller unless the deadline did first.
    func finish(_ result: Result<T, any Error>) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<T, any Error>? in
            switch state {
            case .waiting(let continuation), .leased(let continuation):
                state = .done
                return continuation
            case .idle, .expired, .done:
                state = .done
                return nil
            }
        }
        continuation?.resume(with: result)
    }

    /// The deadline: resumes the caller with `error` unless the answer came first (or, with
    /// `whileWaiting`, the connection did). True when it did resume it (what the call was
    /// waiting for is to be withdrawn).
    func timedOut(_ error: any Error, whileWaiting: Bool = false) -> Bool {
        let continuation = state.withLockedValue { state -> CheckedContinuation<T, any Error>? in
            switch state {
            case .waiting(let continuation):
                state = .done
                return continuation
            case .leased(let continuation) where !whileWaiting:
                state = .done
                return continuation
            case .idle:
                state = .expired(error)
                return nil
            case .leased, .expired, .done:
                return nil
            }
        }
        continuation?.resume(throwing: error)
        return continuation != nil
    }
}
