import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

@testable import JobService

/// The quota's counts exchanged with the store (`QuotaCommand`): what a node takes back from
/// the store is rolled to its own day, and a ledger older than the one it holds is not taken.
@Suite struct QuotaExchangeTests {
    /// 2026-12-08 10:00 UTC, and the UTC day before it.
    static let today = Date(timeIntervalSince1970: 1_796_724_000)
    static var yesterday: Int { Int(today.timeIntervalSince1970) / 86_400 - 1 }

    static func ledger(day: Int, bytes: Int64, revision: Int64) -> String {
        var ledger = QuotaLedger(
            settings: QuotaSettings(day: 100, month: nil, monthStartsOn: 1), day: day, dayBytes: bytes,
            monthStart: CivilDate(year: 2026, month: 12, day: 1)!.dayNumber, monthBytes: bytes)
        ledger.revision = revision
        return ledger.stored.text
    }

    /// Yesterday's quota, reached, stayed in the store after midnight (nothing downloaded
    /// today); an idle node's exchange took it as it was, and the queue held again.
    @Test func yesterdaysStoredLedgerDoesNotHoldToday() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            _ = try await store.updateQuotaText { _ in Self.ledger(day: Self.yesterday, bytes: 150, revision: 3) }
            let clock = ElapsedClock(elapsed: ElapsedClock.continuous.elapsed, sleep: ElapsedClock.continuous.sleep, now: { Self.today })
            try await JobServiceTests.withScheduler(directory, store: store, configure: { $0.clock = clock }) { scheduler in
                _ = await ScheduleCommand.evaluate(at: Self.today, on: scheduler)
                #expect(await !scheduler.quota.reached)
                await QuotaCommand.exchangeCounts(on: scheduler)
                let ledger = await scheduler.quota
                #expect(!ledger.reached && ledger.dayBytes == 0 && ledger.monthBytes == 150, "\(ledger)")
                #expect(await scheduler.holds.quotaReached == false)
            }
        }
    }

    /// Two exchanges of one node may answer out of order: the older ledger is not taken.
    @Test func anOlderLedgerIsNotTaken() async throws {
        try await withTemporaryDirectory { directory in
            let store = InMemoryJobRepository()
            let day = Int(Self.today.timeIntervalSince1970) / 86_400
            _ = try await store.updateQuotaText { _ in Self.ledger(day: day, bytes: 10, revision: 5) }
            let clock = ElapsedClock(elapsed: ElapsedClock.continuous.elapsed, sleep: ElapsedClock.continuous.sleep, now: { Self.today })
            try await JobServiceTests.withScheduler(directory, store: store, configure: { $0.clock = clock }) { scheduler in
                #expect(await scheduler.quota.revision == 5)
                _ = try await store.updateQuotaText { _ in Self.ledger(day: day, bytes: 500, revision: 4) }
                await QuotaCommand.exchangeCounts(on: scheduler)
                #expect(await scheduler.quota.dayBytes == 10)
                _ = try await store.updateQuotaText { _ in Self.ledger(day: day, bytes: 500, revision: 6) }
                await QuotaCommand.exchangeCounts(on: scheduler)
                let taken = await scheduler.quota
                #expect(taken.dayBytes == 500 && taken.reached)
            }
        }
    }
}
