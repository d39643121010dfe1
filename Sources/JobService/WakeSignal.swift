import Synchronization

/// Wakes one sleeper early: `wait(upTo:)` returns after the duration or at the first
/// `signal()`, whichever comes first. A signal given while nobody waits is kept for the
/// next wait, so none is lost between a check and the sleep after it.
final class WakeSignal: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Waits for a signal, at most `duration` when given, on `sleep`.
    func wait(upTo duration: Duration?, sleep: @escaping @Sendable (Duration) async throws -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            if let duration {
                group.addTask { try? await sleep(duration) }
            }
            await group.next()
            group.cancelAll()
            // The signal wait ends on cancellation only once resumed: resume it.
            self.cancelWaiter()
        }
    }

    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await suspendUntilSignalled()
        } onCancel: {
            cancelWaiter()
        }
    }

    private func suspendUntilSignalled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                if Task.isCancelled { return true }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func cancelWaiter() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
