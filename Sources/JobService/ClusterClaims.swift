import CoreMetrics
import Foundation
import Logging
import SluiceCore

/// How a cluster node comes to run jobs: it claims ready ones from the shared store for its
/// free slots, on the runner's actor, one claim at a time.
enum ClusterClaims {
    /// Claims ready jobs for the free slots and starts them, behind this actor: one claim at
    /// a time, a later ask folded into one more claim. `schedule()` asks only when a job
    /// this node knows of looks ready; the store decides which are. None is asked while the
    /// store is known not to answer (the queue asks again when it does).
    ///
    /// A command that may have made a job ready (a create, a resume) waits for the claim
    /// before it answers (`claimed()`), so that the answer, and a command right after it,
    /// see the job claimed.
    static func claimLater(free: Int, on node: isolated JobScheduler) {
        guard node.cluster != nil, free > 0, !node.inEffect.settings.paused, !node.isShuttingDown, node.storeAnswers
        else { return }
        guard node.claimTask == nil else {
            node.claimAgain = true
            return
        }
        node.claimTask = Task {
            repeat {
                node.claimAgain = false
                await claimAndStart(on: node)
            } while node.claimAgain && !node.isShuttingDown
            node.claimTask = nil
        }
    }

    /// Returns once the claim under way, if any, is done.
    static func claimed(on node: isolated JobScheduler) async {
        await node.claimTask?.value
    }

    private static func claimAndStart(on node: isolated JobScheduler) async {
        guard let cluster = node.cluster, !node.inEffect.settings.paused, !node.isShuttingDown, node.storeAnswers else {
            return
        }
        let free = node.inEffect.settings.maxActive - node.runs.runningCount - node.heldSlots
        guard free > 0 else { return }
        let claimed: [ClaimedJob]
        do {
            claimed = try await StoreCallBudget.$current.withValue(StoreCallBudget(node.configuration.storeBudget)) {
                try await cluster.claim(limit: free, at: node.configuration.clock.now(), holds: node.holds)
            }
        } catch {
            node.logger.warning("cannot claim jobs: \(error)")
            return
        }
        for claim in claimed {
            node.noteControlWrite(claim.job.id)
            node.claimsCounter.increment()
            node.perform(node.machine.claimed(claim, nodeName: node.nodeName))
        }
    }
}
