import Foundation
import Logging
import SluiceCore

/// The quotas on the runner's actor: bytes counted as downloads progress, a new quota from
/// `PATCH /queue`, and the counts stored now and then (they survive a restart).
enum QuotaCommand {
    /// `bytes` more downloaded now: at a quota every run goes back to the queue.
    static func count(_ bytes: Int64, on node: isolated JobScheduler) {
        guard !node.quota.settings.isEmpty else { return }
        let now = node.configuration.clock.now()
        let wasReached = node.quota.reached
        node.quota.add(bytes, at: Int64(now.timeIntervalSince1970.rounded(.down)), zone: node.timetable.schedule.zone)
        node.quotaUnsaved = true
        guard node.quota.reached, !wasReached else { return }
        node.logger.notice("the download quota is reached: every job waits for the next period")
        node.jobs.stampHolds(node.holds, now: now)
        node.schedule()
    }

    /// `PATCH /queue`'s `quota`, over the quota in effect: stored first.
    static func update(_ json: JSONValue, on node: isolated JobScheduler) async throws {
        let now = node.configuration.clock.now()
        var updated = node.quota
        updated.settings = try QuotaSettings(json: json, over: node.quota.settings)
        updated.roll(to: Int64(now.timeIntervalSince1970.rounded(.down)), zone: node.timetable.schedule.zone)
        try await node.repository.saveQuotaText(updated.stored.text)
        let wasReached = node.quota.reached
        node.quota = updated
        node.quotaUnsaved = false
        if node.quota.reached != wasReached {
            node.jobs.stampHolds(node.holds, now: now)
            node.schedule()
        }
    }

    /// The counts, when some are not stored yet (the schedule's service asks every few
    /// seconds); a store that does not answer is asked again next time.
    static func saveCounts(on node: isolated JobScheduler) async {
        guard node.quotaUnsaved, node.storeAnswers else { return }
        node.quotaUnsaved = false
        let text = node.quota.stored.text
        let repository = node.repository
        let saved = await StoreCallBudget.$current.withValue(StoreCallBudget(node.configuration.storeBudget)) { () -> Bool in
            (try? await repository.saveQuotaText(text)) != nil
        }
        if !saved { node.quotaUnsaved = true }
    }
}
