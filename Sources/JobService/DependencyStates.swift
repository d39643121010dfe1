import Foundation
import Logging
import SluiceCore

/// What a node knows of the jobs others wait for (`after`), on the runner's actor: their
/// states (held in the table, or kept once a finished one left it), those the store says are
/// gone, and the store asked about the rest. `DependencyCascade` and the machine decide what
/// a dependency's end does; this keeps what they read.
enum DependencyStates {
    /// A job's state: held in the table, or that of a finished dependency the table let go.
    static func state(of id: String, on node: isolated JobScheduler) -> JobState? {
        node.jobs[id]?.state ?? node.finishedDependencies[id]
    }

    /// Those of `after` that have not completed (gone ones included).
    static func notCompleted(_ after: [String], on node: isolated JobScheduler) -> [String] {
        after.filter { state(of: $0, on: node) != .completed }
    }

    /// Whether every job in `after` has completed.
    static func complete(_ job: JobSnapshot, on node: isolated JobScheduler) -> Bool {
        notCompleted(job.after, on: node).isEmpty
    }

    /// Whether every job `after` names is known here: held, finished with its state kept, or
    /// found gone by the store.
    static func known(_ after: [String], on node: isolated JobScheduler) -> Bool {
        after.allSatisfy { state(of: $0, on: node) != nil || node.book.goneFromStore.contains($0) }
    }

    /// The jobs whose `after` names `id`.
    static func waiting(for id: String, on node: isolated JobScheduler) -> [String] {
        node.jobs.withDependencies.filter { $0.after.contains(id) }.map(\.id)
    }

    /// Brings every job's `waitingFor` up to date. A queued job one of whose dependencies no
    /// longer exists can never start: it fails, and so do the jobs waiting for it.
    static func settle(on node: isolated JobScheduler) {
        for candidate in node.jobs.withDependencies {
            guard let job = node.jobs[candidate.id] else { continue }
            node.perform(
                node.machine.dependenciesSettled(
                    job, state: { state(of: $0, on: node) }, gone: { node.book.goneFromStore.contains($0) }))
        }
    }

    /// Fails the queued job `id` with `dependency_failed`, then the queued jobs waiting for
    /// it, and so on down the chain (`DependencyCascade` decides; this records). Called when
    /// a dependency fails or goes: a job resumed later waits for it again (a failed
    /// dependency can be retried).
    static func fail(_ starts: [(id: String, reason: String)], on node: isolated JobScheduler) {
        node.perform(
            node.machine.dependencyFailed(
                starts.map { .init(id: $0.id, reason: $0.reason) }, withDependencies: node.jobs.withDependencies,
                now: node.configuration.clock.now(), state: { state(of: $0, on: node) }
            )
        )
    }

    /// Asks the store, behind the actor, for the states of those of `ids` this node knows
    /// nothing of; schedules again with the answers. One with no row is gone.
    static func askStore(about ids: [String], on node: isolated JobScheduler) {
        let unknown = ids.filter {
            state(of: $0, on: node) == nil && !node.book.goneFromStore.contains($0) && !node.book.askingStoreAbout.contains($0)
        }
        guard !unknown.isEmpty, node.storeAnswers else { return }
        node.book.askingStoreAbout.formUnion(unknown)
        Task {
            await askedStore(about: unknown, on: node)
        }
    }

    private static func askedStore(about unknown: [String], on node: isolated JobScheduler) async {
        // A budget of its own, not the request's that asked (spent, it would fail at once).
        let answered = await StoreCallBudget.$current.withValue(StoreCallBudget(node.configuration.storeBudget)) {
            do {
                try await read(unknown, on: node)
                return true
            } catch {
                node.logger.warning("cannot read the jobs others wait for: \(error)")
                return false
            }
        }
        node.book.askingStoreAbout.subtract(unknown)
        // Read: the queue looks again. Not read: the next read of the change feed asks again.
        if answered { node.schedule() }
    }

    /// Reads from the store the states of those of `ids` this node knows nothing of (finished
    /// jobs it let go, or never held), for the dependency rules; one with no row is gone.
    /// False when one is live there and not held here yet (a cluster's change feed brings it).
    @discardableResult
    static func read(_ ids: some Sequence<String>, on node: isolated JobScheduler) async throws -> Bool {
        var known = true
        for dependency in ids where state(of: dependency, on: node) == nil {
            guard let stored = try await node.repository.job(id: dependency) else {
                node.book.goneFromStore.insert(dependency)
                continue
            }
            node.book.goneFromStore.remove(dependency)
            // Held meanwhile: the table has it.
            guard state(of: dependency, on: node) == nil else { continue }
            node.finishedDependencies[dependency] = stored.state
            if stored.state.isLive { known = false }
        }
        return known
    }

    /// Refuses an `after` naming a job that does not exist (held, or finished in the store).
    static func checkExist(_ after: [String], on node: isolated JobScheduler) async throws {
        for dependency in after where try await !exists(dependency, on: node) {
            throw SluiceError(.invalidField, "after names no job \(dependency)", field: "after")
        }
    }

    /// Whether `id` names a job a new `after` may wait for: held, or finished in the store
    /// (its state kept from now on for the dependency rules).
    private static func exists(_ id: String, on node: isolated JobScheduler) async throws -> Bool {
        if state(of: id, on: node) != nil { return true }
        guard let stored = try await node.storedFinishedJob(id) else { return false }
        node.finishedDependencies[id] = stored.state
        return true
    }

    /// The finished dependencies in `after` (a job's that left, or a refused create's) that no
    /// job held here waits for any more: their states are not needed (a new `after` reads
    /// them from the store again).
    static func forget(_ after: [String], on node: isolated JobScheduler) {
        for dependency in after
        where (node.finishedDependencies[dependency] != nil || node.book.goneFromStore.contains(dependency))
            && !node.jobs.isWaitedFor(dependency)
        {
            node.finishedDependencies[dependency] = nil
            node.book.goneFromStore.remove(dependency)
        }
    }
}
