import DownloadEngine
import Foundation
import Logging
import SluiceCore

/// `PATCH /queue` on the runner's actor: one change of the queue at a time.
enum QueueCommand {
    /// `PATCH /queue`: stored first (nothing changes when the store cannot write), then
    /// applied: a new rate at once, a new `maxActive` within this call (jobs over it go
    /// back to `queued` after a checkpoint), a resumed queue starts what it can.
    static func update(_ patch: QueueSettingsPatch, on node: isolated JobScheduler) async throws -> QueueStatus {
        try patch.validate()
        // One change of the queue at a time: each applies to what the last one stored.
        while node.queueUpdating { await withCheckedContinuation { node.queueUpdateWaiters.append($0) } }
        node.queueUpdating = true
        defer {
            node.queueUpdating = false
            if !node.queueUpdateWaiters.isEmpty { node.queueUpdateWaiters.removeFirst().resume() }
        }
        let before = node.inEffect
        if let quota = patch.quota { try await QuotaCommand.update(quota, on: node) }
        let updated = patch.applied(to: node.settings)
        if updated != node.settings {
            try await node.repository.saveQueueSettings(updated)
            // Counted once stored: a change feed read that began before then (even after the
            // write was sent) may hold the old settings, and must not bring them back.
            node.book.writeCount += 1
            node.book.settingsWritten = node.book.writeCount
            node.settings = updated
            node.logger.info(
                "queue settings changed: paused \(updated.paused), maxActive \(updated.maxActive), limitRate \(updated.limitRate.map(String.init) ?? "none")"
            )
        }
        // A change of what a rule sets overrides the rule until its next change.
        node.timetable.overridden(by: patch, until: patch.until, at: node.configuration.clock.now())
        ScheduleCommand.applyInEffect(on: node)
        if node.inEffect != before { await ClusterClaims.claimed(on: node) }
        return node.queue()
    }
}
