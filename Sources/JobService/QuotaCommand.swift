import Foundation
import Logging
import SluiceCore

/// The quotas on the runner's actor: bytes counted as downloads progress, a new quota from
/// `PATCH /queue`, and the counts exchanged with the store every few seconds (they survive a
/// restart, and a cluster's nodes add theirs to one ledger: a quota counts every node's bytes).
enum QuotaCommand {
    /// `bytes` more downloaded now: at a quota every run goes back to the queue. Counted with
    /// no quota set too: a quota set later (on this node or another) holds today's bytes.
    static func count(_ bytes: Int64, on node: isolated JobScheduler) {
        guard bytes > 0 else { return }
        var counted = node.quota
        counted.add(bytes, at: instant(on: node), zone: node.timetable.schedule.zone)
        node.quotaUnsaved = node.quotaUnsaved.addingSaturating(bytes)
        adopt(counted, on: node)
    }

    /// `PATCH /queue`'s `quota`: checked here, then stored over the stored quotas (another
    /// node's change meanwhile kept), then in effect.
    static func update(_ json: JSONValue, on node: isolated JobScheduler) async throws {
        _ = try QuotaSettings(json: json, over: node.quota.settings)
        try await exchange(patch: json, on: node)
    }

    /// This node's counts added to the stored ledger, and the ledger every node added to
    /// taken as the one in effect (the schedule's service asks every few seconds, and a stop
    /// once more); a store that does not answer is asked again next time.
    static func exchangeCounts(on node: isolated JobScheduler) async {
        guard node.storeAnswers else { return }
        await StoreCallBudget.$current.withValue(StoreCallBudget(node.configuration.storeBudget)) {
            try? await exchange(patch: nil, on: node)
        }
    }

    /// Adds the unsaved bytes (and, with `patch`, new quotas) to the stored ledger in one
    /// transaction, or with nothing to add reads it; then adopts it, rolled to now, with what
    /// this node counted while the store answered. The bytes are taken before the store is
    /// asked, so that an exchange meanwhile (a `PATCH` beside the periodic one) cannot add them
    /// twice; of two exchanges that answer out of order, the older ledger is not adopted.
    ///
    /// Left as they are: bytes whose transaction committed after the store budget ran out are
    /// added again by the next exchange, and bytes counted in the last seconds before
    /// midnight but added after it count in the new day.
    private static func exchange(patch: JSONValue?, on node: isolated JobScheduler) async throws {
        let bytes = node.quotaUnsaved
        let now = instant(on: node)
        let zone = node.timetable.schedule.zone
        let text: String
        if bytes == 0, patch == nil {
            guard let stored = try await node.repository.quotaText() else { return }
            text = stored
        } else {
            node.quotaUnsaved = 0
            do {
                text = try await node.repository.updateQuotaText { stored in
                    QuotaLedger.merged(
                        stored: stored.flatMap(QuotaLedger.init(storedText:)), adding: bytes, patch: patch, at: now, zone: zone
                    ).stored.text
                }
            } catch {
                node.quotaUnsaved = node.quotaUnsaved.addingSaturating(bytes)
                throw error
            }
        }
        guard var ledger = QuotaLedger(storedText: text), ledger.revision >= node.quota.revision else { return }
        ledger.roll(to: instant(on: node), zone: zone)
        ledger.add(node.quotaUnsaved, at: instant(on: node), zone: zone)
        adopt(ledger, on: node)
    }

    /// `ledger` in effect: a quota reached, or no more reached, holds or frees the queue.
    private static func adopt(_ ledger: QuotaLedger, on node: isolated JobScheduler) {
        let wasReached = node.quota.reached
        node.quota = ledger
        guard ledger.reached != wasReached else { return }
        if ledger.reached { node.logger.notice("the download quota is reached: every job waits for the next period") }
        node.jobs.stampHolds(node.holds, now: node.configuration.clock.now())
        node.schedule()
    }

    private static func instant(on node: isolated JobScheduler) -> Int64 {
        Int64(node.configuration.clock.now().timeIntervalSince1970.rounded(.down))
    }
}
