public import SluiceCore
import Synchronization

/// Group commit for checkpoints: every running job's saves go through one writer, which
/// commits whatever is pending in one transaction. A save that finds no commit under way
/// starts one at once (no added wait); saves that come during a commit go together in the
/// next. Sixteen downloads that checkpoint at once cost one or two commits, not sixteen.
///
/// A save returns once its transaction has committed, or throws what the store threw: the
/// engine's rule (a checkpoint never claims bytes the store has not kept) holds as before.
/// The commits run on the store's threads in a task of the writer's own, so a save from a
/// cancelled run (a pause's last checkpoint) is written like any other.
public final class CheckpointWriter: Sendable {
    private struct Pending {
        var write: CheckpointWrite
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var pending: [Pending] = []
        var committing = false
        var commits = 0
    }

    private let repository: any JobRepository
    private let state = Mutex(State())

    public init(repository: any JobRepository) {
        self.repository = repository
    }

    /// Saves (or, with nil, clears) the job's checkpoint; returns once it is committed.
    public func save(_ checkpoint: DownloadCheckpoint?, id: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let starts = state.withLock { state in
                state.pending.append(Pending(write: CheckpointWrite(id: id, checkpoint: checkpoint), continuation: continuation))
                defer { state.committing = true }
                return !state.committing
            }
            if starts { Task.detached { await self.commitPending() } }
        }
    }

    /// Saves waiting for the next commit.
    public var waiting: Int { state.withLock { $0.pending.count } }
    /// Transactions committed (or tried) so far.
    public var commits: Int { state.withLock { $0.commits } }

    /// Commits what is pending, then what came meanwhile, until nothing is left.
    private func commitPending() async {
        while true {
            let batch = state.withLock { state -> [Pending] in
                defer { state.pending = [] }
                if state.pending.isEmpty { state.committing = false }
                return state.pending
            }
            guard !batch.isEmpty else { return }
            let writes = batch.map(\.write)
            let result: Result<Void, any Error>
            do {
                try await StoreCalls.run { [repository] in try repository.saveCheckpoints(writes) }
                result = .success(())
            } catch {
                result = .failure(error)
            }
            state.withLock { $0.commits += 1 }
            for pending in batch { pending.continuation.resume(with: result) }
        }
    }
}
