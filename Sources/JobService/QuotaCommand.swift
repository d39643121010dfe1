import Foundation
import Logging
import SluiceCore

/// The quotas on the runner's actor: bytes counted as downloads progress, a new quota from
/// `PATCH /queue`, and the counts stored now and then (they survive a restart).
extension JobScheduler {
    /// `bytes` more downloaded now: at a quota every run goes back to the queue.
    func countAgainstQuota(_ bytes: Int64) {
        guard !quota.settings.isEmpty else { return }
        let wasReached = quota.reached
        quota.add(bytes, at: Int64(configuration.clock.now().timeIntervalSince1970.rounded(.down)), zone: timetable.schedule.zone)
        quotaUnsaved = true
        guard quota.reached, !wasReached else { return }
        logger.notice("the download quota is reached: every job waits for the next period")
        jobs.stampHolds(holds, now: configuration.clock.now())
        schedule()
    }

    /// `PATCH /queue`'s `quota`, over the quota in effect: stored first.
    func updateQuota(_ json: JSONValue) async throws {
        var updated = quota
        updated.settings = try QuotaSettings(json: json, over: quota.settings)
        updated.roll(to: Int64(configuration.clock.now().timeIntervalSince1970.rounded(.down)), zone: timetable.schedule.zone)
        try await repository.saveQuotaText(updated.stored.text)
        let wasReached = quota.reached
        quota = updated
        quotaUnsaved = false
        if quota.reached != wasReached {
            jobs.stampHolds(holds, now: configuration.clock.now())
            schedule()
        }
    }

    /// The counts, when some are not stored yet (the schedule's service asks every few
    /// seconds); a store that does not answer is asked again next time.
    func saveQuotaCounts() async {
        guard quotaUnsaved, storeAnswers else { return }
        quotaUnsaved = false
        let text = quota.stored.text
        let saved = await StoreCallBudget.$current.withValue(StoreCallBudget(configuration.storeBudget)) { () -> Bool in
            (try? await repository.saveQuotaText(text)) != nil
        }
        if !saved { quotaUnsaved = true }
    }
}
