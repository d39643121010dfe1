import CoreMetrics
import Foundation
import Logging
import SluiceCore

/// A cluster node's heartbeat and rescue, run by its services (`ClusterServices`) on the
/// runner's actor, awaiting the store while the runner goes on: ends the store did not take
/// recorded, the node's leases renewed (any not renewed is lost), creates answered 503
/// removed, and other nodes' expired leases rescued.
enum ClusterHeartbeat {
    /// How often a node heartbeats, renews its leases and runs the rescue: a fifth of the
    /// lease, between 0.2 s and 2 s.
    static func interval(lease: Duration) -> Duration {
        max(.milliseconds(200), min(.seconds(2), lease / 5))
    }

    /// One heartbeat: the runs that ended while the store did not answer recorded, this node
    /// alive, its leases renewed (any not renewed is lost). The store is awaited while this
    /// actor goes on.
    static func beat(on node: isolated JobScheduler) async {
        node.runningGauge.record(node.runs.runningCount)
        guard let cluster = node.cluster, !node.isShuttingDown, node.storeAnswers, !Task.isCancelled else { return }
        // Bounded as a command's: the ends it records tell the API's commands.
        await StoreCallBudget.bounded(node.configuration.storeBudget) { await recordEndedRuns(on: node) }
        let held = node.runs.leases
        do {
            let lost = try await cluster.heartbeat(running: held)
            node.book.heartbeatAnswered = true
            for id in lost { if let lease = node.runs[id].lease, held.contains(lease) { await node.leaseLost(id: id, epoch: lease.epoch) } }
        } catch {
            node.book.heartbeatAnswered = false
            node.logger.warning("heartbeat failed: \(error)")
        }
        await removeAbandonedCreates(on: node)
    }

    /// The rescue of other nodes' expired leases, if this node wins the lock. Only after this
    /// node's own last heartbeat was answered, and not while it has ends of its own to record
    /// (`recordEndedRuns`): those go first, before a rescue could take them back.
    static func rescue(on node: isolated JobScheduler) async {
        guard let cluster = node.cluster, !node.isShuttingDown, node.storeAnswers, node.book.heartbeatAnswered,
            node.book.unrecordedRuns.isEmpty, !Task.isCancelled
        else { return }
        do {
            let rescued = try await cluster.rescue(staleAfter: cluster.leaseDuration)
            if !rescued.isEmpty {
                node.logger.notice(
                    "requeued \(rescued.count) job(s) whose node stopped renewing its lease: \(rescued.joined(separator: ", "))")
                node.rescuedCounter.increment(by: Int64(rescued.count))
                await ClusterChangeFeed.synchronize(full: false, on: node)
            }
        } catch {
            node.logger.warning("rescue failed: \(error)")
        }
    }

    /// Removes the rows of creates answered 503 (`abandonedCreates`), in case their insert
    /// committed after the answer: again at every heartbeat for a minute, since a `COMMIT`
    /// the node gave up on may land later still. Nothing was told of them, so no webhook is.
    static func removeAbandonedCreates(on node: isolated JobScheduler) async {
        for (id, since) in node.book.abandonedCreates {
            do {
                try await node.repository.delete(id: id, deliveries: [])
            } catch {
                return
            }
            if ContinuousClock.now - since > .seconds(60) { node.book.abandonedCreates[id] = nil }
        }
    }

    /// Records the outcomes of runs that ended while the store did not answer; one the store
    /// took back meanwhile (another node has it now) is read again.
    static func recordEndedRuns(on node: isolated JobScheduler) async {
        guard let cluster = node.cluster else { return }
        for (id, ended) in node.book.unrecordedRuns {
            // Deleted meanwhile (the loop awaits the store): nothing to record.
            guard node.book.unrecordedRuns[id] != nil else { continue }
            do {
                let recorded = try await cluster.finishRun(ended.job, lease: ended.lease)
                node.book.unrecordedRuns[id] = nil
                node.noteControlWrite(id)
                if !recorded {
                    node.leasesLostCounter.increment()
                    try? await node.refresh(id)
                    node.letGoIfFinished(id)
                    node.schedule()
                } else {
                    // Told, then what follows from its state, as for an end recorded at once.
                    if let tell = WebhookEvent(ending: ended.job.state) { await node.webhooks?.record(tell, job: ended.job) }
                    node.perform(node.machine.endStored(ended.job))
                }
            } catch {
                node.logger.warning("cannot save job \(id) yet: \(error)")
                return
            }
        }
    }
}
