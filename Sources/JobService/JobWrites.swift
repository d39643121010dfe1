public import ServiceLifecycle
import SluiceCore
import Synchronization

/// The job changes the service decided, written behind it, in order, without the service
/// waiting: the scheduler changes its table, publishes, and puts the change here; this
/// commits what is pending in one transaction (a job's change with the webhook deliveries
/// that tell of it), then what came meanwhile.
///
/// - A job's changes are coalesced: only its latest snapshot is written, once. On a single
///   node a change and its webhook deliveries are one transaction; a cluster's control write
///   and its deliveries are two (the deliveries follow the write that won).
/// - A cluster node's change is a control write made only while the stored row is still in
///   the state the node saw (`expected`): the first pending change's, since the store has
///   not seen the later ones.
/// - While the store does not answer, the changes stay here (one per job) and are written
///   once it does: the service goes on from memory meanwhile.
/// - What a write means afterwards (a finished job leaves the table once its state is
///   stored; a refused control write reads the job again) is the scheduler's: it is told
///   through `written`.
///
/// A command that writes the same job itself (a delete, a cluster's control write) first
/// waits until nothing of it is pending here (`stored(_:)`), within its budget.
///
/// The writing is a service (`run()`) of the service group, stopped after the downloads
/// (docs/job-service.md, "Services and shutdown"); nothing is written while it does not run.
public final class JobWrites: Service, Sendable {
    struct Write: Sendable {
        var job: JobSnapshot
        /// The state the store must still hold for a cluster's control write; nil for a
        /// plain update.
        var expected: JobState?
        var deliveries: [WebhookDelivery]
    }

    /// How a write ended.
    enum Outcome: Sendable, Equatable {
        case stored
        /// A control write the store refused: another node changed the job first.
        case refused
    }

    private struct State {
        var pending: [String: Write] = [:]
        /// Ids in the order their first pending change came.
        var order: [String] = []
        var inFlight: Set<String> = []
        /// The service is shutting down: what is left is tried once more, not again and again.
        var stopping = false
        /// The last write failed: the next failure is not told again (one line per outage).
        var failing = false
        var waiters: [String: [(token: UInt64, continuation: CheckedContinuation<Void, Never>)]] = [:]
        var transactions = 0
        /// Jobs whose changes wait to go together (`hold`): pending, not written yet.
        var held: Set<String> = []

        /// The next ids to write, at most `limit`, in order, none held; taken out of `order`.
        mutating func takeOrder(limit: Int) -> [String] {
            guard !held.isEmpty else {
                let ids = Array(order.prefix(limit))
                order.removeFirst(ids.count)
                return ids
            }
            var ids: [String] = []
            for id in order where !held.contains(id) {
                ids.append(id)
                if ids.count == limit { break }
            }
            let taken = Set(ids)
            order.removeAll { taken.contains($0) }
            return ids
        }
    }

    /// At most this many jobs in one transaction.
    static let batchLimit = 500

    private let repository: any JobRepository
    private let cluster: (any ClusterStore)?
    private let state = Mutex(State())
    /// Rung by every change put here: the service writes it at once.
    private let wake = WakeSignal()
    private let stopped = WakeSignal()
    private let retryDelay: Duration
    typealias Written = @Sendable ([(id: String, write: Write, outcome: Outcome)]) async -> Void
    /// Told what was written (set once, by the scheduler that owns this).
    private let handlers = Mutex<(written: Written, failed: @Sendable (any Error) -> Void)?>(nil)

    init(repository: any JobRepository, retryDelay: Duration = .seconds(1)) {
        self.repository = repository
        self.cluster = repository as? any ClusterStore
        self.retryDelay = retryDelay
    }

    /// Whom to tell what was written, and what failed (the store's error, logged).
    func tell(written: @escaping Written, failed: @escaping @Sendable (any Error) -> Void) {
        handlers.withLock { $0 = (written, failed) }
    }

    /// Puts a job's change to write: merged with a pending one of the same job.
    func put(_ job: JobSnapshot, expected: JobState? = nil, deliveries: [WebhookDelivery] = []) {
        state.withLock { state in
            if var queued = state.pending[job.id] {
                queued.job = job
                queued.deliveries += deliveries
                state.pending[job.id] = queued
            } else {
                state.pending[job.id] = Write(job: job, expected: expected, deliveries: deliveries)
                state.order.append(job.id)
            }
        }
        wake.signal()
    }

    /// Keeps the changes of `ids` here until `release`, merged into one write each: a pause's
    /// state and the bytes its stopped run leaves go together. Someone waiting for one of
    /// them to be stored (`stored(_:)`) ends its hold, and a job someone already waits for is not held.
    func hold(_ ids: [String]) {
        // Not a job someone already waits for: its wait would outlast its budget.
        state.withLock { state in state.held.formUnion(ids.filter { state.waiters[$0]?.isEmpty ?? true }) }
    }

    /// Writes what `hold` kept.
    func release(_ ids: [String]) {
        let pending = state.withLock { state -> Bool in
            state.held.subtract(ids)
            return ids.contains { state.pending[$0] != nil }
        }
        if pending { wake.signal() }
    }

    /// Takes the job's pending change out of the queue (not one being written): a command
    /// writes it with its own, rather than wait for the queue ahead of it. Those waiting for
    /// the job are woken (nothing of it is queued any more).
    func take(_ id: String) -> Write? {
        let taken = state.withLock { state -> Write? in
            guard let write = state.pending.removeValue(forKey: id) else { return nil }
            state.order.removeAll { $0 == id }
            return write
        }
        if taken != nil { wakeWaiters(of: id) }
        return taken
    }

    /// Whether a change of the job is still to be written (pending, or being written).
    func isPending(_ id: String) -> Bool {
        state.withLock { $0.pending[id] != nil || $0.inFlight.contains(id) }
    }

    /// Changes not written yet (the tests' and the metrics' view).
    public var backlog: Int { state.withLock { $0.pending.count + $0.inFlight.count } }
    /// Transactions tried so far.
    public var transactions: Int { state.withLock { $0.transactions } }

    /// A deleted job: its pending change is not written (one being written changes no row
    /// once the job's row is gone).
    func forget(_ id: String) {
        state.withLock { state in
            guard state.pending.removeValue(forKey: id) != nil else { return }
            state.order.removeAll { $0 == id }
        }
        wakeWaiters(of: id)
    }

    /// Returns once nothing of the job is pending here; throws `store_unavailable` when the
    /// caller's budget (`StoreCallBudget`) runs out first.
    func stored(_ id: String) async throws { try await wait(for: id, inFlightOnly: false) }

    /// Returns once no write of the job is under way (one still pending may stay): a command
    /// that takes the pending one to write with its own must not race the one being written.
    func landed(_ id: String) async throws { try await wait(for: id, inFlightOnly: true) }

    private func wait(for id: String, inFlightOnly: Bool) async throws {
        let deadline = ContinuousClock.now + (StoreCallBudget.remaining ?? StoreCallBudget.request)
        let waiting = { inFlightOnly ? self.state.withLock { $0.inFlight.contains(id) } : self.isPending(id) }
        // Woken when the job's write lands; a newer change of it may be pending by then. A
        // hold (set before this wait or during it) does not outlast a waiter.
        while waiting() {
            if state.withLock({ $0.held.contains(id) }) { release([id]) }
            let limit = deadline - ContinuousClock.now
            guard limit > .zero else {
                throw SluiceError(.storeUnavailable, "the job store is not answering: job \(id)'s last change is not stored yet")
            }
            let token = UInt64.random(in: .min ... .max)
            // The write's landing or the budget's end, whichever comes first.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.waitForWrite(of: id, token: token, inFlightOnly: inFlightOnly) }
                group.addTask {
                    try? await Task.sleep(for: limit)
                    self.resume(id, token: token)
                }
                await group.next()
                group.cancelAll()
                // A timer that ran out before the waiter was registered found nobody to resume.
                resume(id, token: token)
            }
        }
    }

    private func waitForWrite(of id: String, token: UInt64, inFlightOnly: Bool) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                guard (!inFlightOnly && state.pending[id] != nil) || state.inFlight.contains(id) else { return true }
                // Given up before it began (the budget ran out first): not registered, so the
                // resume after the give-up has nothing to miss.
                if Task.isCancelled { return true }
                state.waiters[id, default: []].append((token, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// One waiter's time is up: it goes on (and finds the job still pending).
    private func resume(_ id: String, token: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let index = state.waiters[id]?.firstIndex(where: { $0.token == token }) else { return nil }
            return state.waiters[id]!.remove(at: index).continuation
        }
        waiter?.resume()
    }

    /// Wakes those waiting for the job once nothing of it is pending.
    private func wakeWaiters(of id: String) {
        let waiters = state.withLock { state -> [(token: UInt64, continuation: CheckedContinuation<Void, Never>)] in
            guard state.pending[id] == nil && !state.inFlight.contains(id) else { return [] }
            return state.waiters.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// Writes changes as they are put here until the service group shuts down (after the
    /// downloads, which put their last changes here) or the task is cancelled; then what is
    /// left, tried once.
    public func run() async {
        await withGracefulShutdownHandler {
            while !isStopping {
                await writePending()
                guard !isStopping else { break }
                await wake.wait(upTo: nil) { try await Task.sleep(for: $0) }
            }
        } onGracefulShutdown: { [self] in
            stop()
        }
        // What is left, tried once, in a task a cancellation of this one does not reach (a
        // store call would refuse to start in a cancelled task).
        state.withLock { $0.stopping = true }
        await Task { await self.writePending() }.value
    }

    private var isStopping: Bool { Task.isCancelled || state.withLock { $0.stopping } }

    private func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
        stopped.signal()
    }

    /// Writes what is pending, then what came meanwhile, until nothing is left; waits and
    /// tries again while the store does not answer (once only when stopping).
    private func writePending() async {
        while true {
            let batch = state.withLock { state -> [Write] in
                // A cluster's control writes go one by one: each is made or refused alone.
                let ids = state.takeOrder(limit: cluster == nil ? Self.batchLimit : 1)
                let batch = ids.compactMap { state.pending.removeValue(forKey: $0) }
                state.inFlight.formUnion(batch.map(\.job.id))
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let outcomes = try await write(batch)
                state.withLock { state in
                    state.transactions += 1
                    state.failing = false
                    state.inFlight.subtract(batch.map(\.job.id))
                }
                await handlers.withLock { $0 }?.written(zip(batch, outcomes).map { (id: $0.job.id, write: $0, outcome: $1) })
                for write in batch { wakeWaiters(of: write.job.id) }
            } catch {
                let told = state.withLock { state in
                    defer { state.failing = true }
                    return state.failing
                }
                if !told { handlers.withLock { $0 }?.failed(error) }
                // Back in front, merged with what came meanwhile (the newer snapshot wins; the
                // store still holds the state the first write expected).
                state.withLock { state in
                    state.transactions += 1
                    state.inFlight.subtract(batch.map(\.job.id))
                    var front: [String] = []
                    for var write in batch {
                        if let newer = state.pending[write.job.id] {
                            write.job = newer.job
                            write.deliveries += newer.deliveries
                            state.order.removeAll { $0 == write.job.id }
                        }
                        state.pending[write.job.id] = write
                        front.append(write.job.id)
                    }
                    state.order.insert(contentsOf: front, at: 0)
                }
                if isStopping { return }
                // Not woken by new changes (that would try a failing store at their pace): by
                // the delay, or by a stop.
                await stopped.wait(upTo: retryDelay) { try await Task.sleep(for: $0) }
            }
        }
    }

    /// One transaction for a single node's changes; a cluster's control writes one by one
    /// (each is refused or made on its own), with their deliveries once made.
    private func write(_ batch: [Write]) async throws -> [Outcome] {
        guard let cluster else {
            try await repository.update(batch.map(\.job), deliveries: batch.flatMap(\.deliveries))
            return batch.map { _ in .stored }
        }
        var outcomes: [Outcome] = []
        for write in batch {
            if let expected = write.expected {
                guard try await cluster.update(write.job, expectedState: expected) else {
                    outcomes.append(.refused)
                    continue
                }
            } else {
                try await cluster.update(write.job)
            }
            if !write.deliveries.isEmpty { try await cluster.saveDeliveries(write.deliveries) }
            outcomes.append(.stored)
        }
        return outcomes
    }
}
