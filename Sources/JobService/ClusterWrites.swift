import CoreMetrics
import Foundation
import Logging
import SluiceCore

/// What a cluster node writes to the shared store before anything is shown
/// (`StoreFirst`), on the runner's actor: a command's change while the store still holds the
/// state it expected, and a run's end under its lease. The store's answers go back to the
/// machine, which says what follows.
enum ClusterWrites {
    /// `StoreFirst.controlWrite`: a command's change written first, while the store still
    /// holds `expected`, with this node's change of the job that was still queued. Throws
    /// when the store cannot write (nothing changed; the queued change goes back to be
    /// written behind) or another node changed the job first (409, read back). False when
    /// the job moved on here while the store was asked.
    static func controlWrite(
        _ job: JobSnapshot, expected: JobState, with queued: JobWrites.Write?, on node: isolated JobScheduler
    ) async throws -> Bool {
        guard let cluster = node.cluster else { return true }
        let id = job.id
        let seen = node.jobs[id]?.state
        node.noteControlWrite(id)
        let written: Bool
        do {
            written = try await cluster.update(job, expectedState: expected)
            if written, let deliveries = queued?.deliveries, !deliveries.isEmpty {
                try await cluster.saveDeliveries(deliveries)
                node.webhooks?.stored(deliveries)
            }
        } catch {
            // Nothing changed: the queued change goes back to be written behind.
            if let queued { node.writes.put(queued.job, expected: queued.expected, deliveries: queued.deliveries) }
            throw error
        }
        guard written else {
            try await node.refresh(id)
            throw SluiceError(
                .invalidTransition,
                "job \(id) changed on another node meanwhile (it is \(node.jobs[id]?.state.rawValue ?? "gone") now); try again"
            )
        }
        node.noteControlWrite(id)
        return node.jobs[id]?.state == seen
    }

    /// `StoreFirst.finishRun`: a cluster run's end written under its lease before anything
    /// is shown; the store's answer goes back to the machine (`finishAnswered`), which says
    /// what follows. False when the store could not take it (the heartbeat records it later,
    /// `recordEndedRuns`).
    static func finishRun(_ finishing: JobSnapshot, lease: Lease, tell: WebhookEvent?, on node: isolated JobScheduler) async -> Bool {
        guard let cluster = node.cluster else { return true }
        let id = finishing.id
        node.progress?.forget(id)
        node.noteControlWrite(id)
        let before = node.jobs[id]
        let answer: FinishAnswer
        do {
            // Awaited: this actor answers meanwhile.
            answer = try await cluster.finishRun(finishing, lease: lease) ? .recorded : .takenBack
            // A read of the change feed that began during the wait is older than this.
            node.noteControlWrite(id)
        } catch {
            node.logger.warning("job \(id) ended while the store cannot record it; recorded once it answers: \(error)")
            answer = .unavailable
        }
        switch node.machine.finishAnswered(answer, finishing: finishing, lease: lease, tell: tell, before: before, now: node.jobs[id]) {
        case .nothing:
            return true
        case .readBack(let takenBack):
            if takenBack { node.leasesLostCounter.increment() }
            try? await node.refresh(id)
            node.schedule()
            return true
        case .unrecorded(let actions):
            node.perform(actions)
            return false
        case .recorded(let tell):
            if let tell { await node.webhooks?.record(tell, job: finishing) }
            node.perform(node.machine.endTold(finishing, present: node.jobs[id] != nil))
            return true
        }
    }
}
