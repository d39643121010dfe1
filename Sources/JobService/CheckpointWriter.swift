public import ServiceLifecycle
public import SluiceCore
import Synchronization

/// Group commit for checkpoints: every running job's saves go through one writer, which
/// commits whatever is pending in one transaction. A save that finds no commit under way
/// starts one at once (no added wait); saves that come during a commit go together in the
/// next. Sixteen downloads that checkpoint at once cost one or two commits, not sixteen.
///
/// A save returns once its transaction has committed, or throws what the store threw: the
/// engine's rule (a checkpoint never claims bytes the store has not kept) holds as before. A
/// cluster run's save is fenced by its lease (`save(_:lease:)`): false when the store refused
/// it, the others in its transaction saved all the same.
/// The commits run in the writer's service (`run()`, in the service group, stopped after the
/// downloads), so a save from a cancelled run (a pause's last checkpoint) is written like any
/// other. A save once the service has stopped fails at once.
public final class CheckpointWriter: Service, Sendable {
    private struct Pending {
        var write: CheckpointWrite
        var lease: Lease?
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var pending: [Pending] = []
        var stopped = false
        var commits = 0
    }

    private let repository: any JobRepository
    private let state = Mutex(State())
    /// Rung by every save: the service commits at once.
    private let wake = WakeSignal()
    private let stopping = Mutex(false)

    public init(repository: any JobRepository) {
        self.repository = repository
    }

    /// Saves (or, with nil, clears) the job's checkpoint; returns once it is committed.
    public func save(_ checkpoint: DownloadCheckpoint?, id: String) async throws {
        _ = try await enqueue(CheckpointWrite(id: id, checkpoint: checkpoint), lease: nil)
    }

    /// Saves (or clears) a cluster run's checkpoint under its lease: false when the store
    /// refused it (the lease was taken back).
    public func save(_ checkpoint: DownloadCheckpoint?, lease: Lease) async throws -> Bool {
        try await enqueue(CheckpointWrite(id: lease.jobID, checkpoint: checkpoint), lease: lease)
    }

    private func enqueue(_ write: CheckpointWrite, lease: Lease?) async throws -> Bool {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            let taken = state.withLock { state in
                guard !state.stopped else { return false }
                state.pending.append(Pending(write: write, lease: lease, continuation: continuation))
                return true
            }
            guard taken else { return continuation.resume(throwing: Self.stoppedError) }
            wake.signal()
        }
    }

    static var stoppedError: SluiceError { SluiceError(.storeUnavailable, "the service is stopping: the checkpoint is not saved") }

    /// Commits saves as they come until the service group shuts down (after the downloads,
    /// whose last checkpoints come here) or the task is cancelled; then what is left, once.
    public func run() async {
        await withGracefulShutdownHandler {
            while !isStopping {
                await commitPending()
                guard !isStopping else { break }
                await wake.wait(upTo: nil) { try await Task.sleep(for: $0) }
            }
        } onGracefulShutdown: { [self] in
            stopping.withLock { $0 = true }
            wake.signal()
        }
        // What came last is committed, in a task a cancellation of this one does not reach (a
        // store call would refuse to start in a cancelled task); a save after this fails at once.
        state.withLock { $0.stopped = true }
        await Task { await self.commitPending() }.value
    }

    private var isStopping: Bool { Task.isCancelled || stopping.withLock { $0 } }

    /// Saves waiting for the next commit.
    public var waiting: Int { state.withLock { $0.pending.count } }
    /// Transactions committed (or tried) so far.
    public var commits: Int { state.withLock { $0.commits } }

    /// Commits what is pending, then what came meanwhile, until nothing is left.
    private func commitPending() async {
        while true {
            let batch = state.withLock { state -> [Pending] in
                defer { state.pending = [] }
                return state.pending
            }
            guard !batch.isEmpty else { return }
            let results = await Self.commit(batch, to: repository)
            state.withLock { $0.commits += 1 }
            for (pending, result) in zip(batch, results) { pending.continuation.resume(with: result) }
        }
    }

    /// One transaction for the plain saves and one for the fenced ones (a node has one kind
    /// or the other); each save gets its own kind's outcome, in the batch's order.
    private static func commit(_ batch: [Pending], to repository: any JobRepository) async -> [Result<Bool, any Error>] {
        var results = [Result<Bool, any Error>](repeating: .success(true), count: batch.count)
        let plain = batch.indices.filter { batch[$0].lease == nil }
        if !plain.isEmpty {
            do {
                try await repository.saveCheckpoints(plain.map { batch[$0].write })
            } catch {
                for index in plain { results[index] = .failure(error) }
            }
        }
        let fenced = batch.indices.filter { batch[$0].lease != nil }
        guard !fenced.isEmpty else { return results }
        do {
            guard let cluster = repository as? any ClusterStore else {
                throw SluiceError(.storeUnavailable, "a fenced checkpoint needs a cluster's store")
            }
            let saved = try await cluster.saveCheckpoints(fenced.map { (checkpoint: batch[$0].write.checkpoint, lease: batch[$0].lease!) })
            for (position, index) in fenced.enumerated() { results[index] = .success(saved[position]) }
        } catch {
            for index in fenced { results[index] = .failure(error) }
        }
        return results
    }
}
