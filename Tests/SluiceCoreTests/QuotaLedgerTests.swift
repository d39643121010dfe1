import Foundation
import Testing

@testable import SluiceCore

/// CONTRACT.md §7, "Quotas": bytes per calendar day and month in the schedule's zone.
@Suite struct QuotaLedgerTests {
    static let berlin = ScheduleZone(identifier: "Europe/Berlin")!
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0) -> Int64 {
        Int64(CivilDate(year: year, month: month, day: day)!.dayNumber) * 86_400 + Int64(hour * 3600 + minute * 60)
    }

    @Test func aDayQuotaHoldsUntilLocalMidnightAndAMonthOneUntilItsPeriodEnds() {
        var ledger = QuotaLedger(settings: QuotaSettings(day: 100, month: 250, monthStartsOn: 15))
        // 2026-12-14 22:30 UTC is 23:30 in Berlin, the day before the month's period starts.
        ledger.add(60, at: Self.utc(2026, 12, 14, 22, 30), zone: Self.berlin)
        #expect(!ledger.reached && ledger.remainingDay == 40)
        ledger.add(40, at: Self.utc(2026, 12, 14, 22, 45), zone: Self.berlin)
        #expect(ledger.reached)
        #expect(ledger.resets(zone: Self.berlin) == Self.utc(2026, 12, 14, 23, 0), "Berlin's midnight")
        // Midnight in Berlin: a new day, and a new month's period (the 15th).
        let rolled = ledger.roll(to: Self.utc(2026, 12, 14, 23, 0), zone: Self.berlin)
        #expect(rolled)
        #expect(!ledger.reached && ledger.dayBytes == 0 && ledger.monthBytes == 0)
        for hour in 0..<3 { ledger.add(90, at: Self.utc(2026, 12, 15 + hour, 12), zone: Self.berlin) }
        #expect(ledger.reached, "270 of 250 this month")
        #expect(ledger.resets(zone: Self.berlin) == Self.utc(2027, 1, 14, 23, 0), "the next period: January 15th, Berlin")
        #expect(ledger.remainingMonth == 0, "never below 0")
        #expect(ledger.periodStart(of: CivilDate(year: 2027, month: 1, day: 3)!) == CivilDate(year: 2026, month: 12, day: 15))
    }

    /// Two nodes add to one stored ledger: the sum, in the periods of the instant added at;
    /// new settings keep the counts; yesterday's stored bytes are not today's.
    @Test func nodesAddToTheStoredLedgerAndNoneOverwritesAnother() throws {
        let noon = Self.utc(2026, 12, 7, 11)
        let quota = QuotaSettings(day: 300, month: nil, monthStartsOn: 1)
        let first = QuotaLedger.merged(stored: nil, adding: 100, patch: .object([("day", .integer(300))]), at: noon, zone: Self.berlin)
        let text = first.stored.text
        let second = QuotaLedger.merged(
            stored: QuotaLedger(storedText: text), adding: 250, patch: nil, at: noon + 60, zone: Self.berlin)
        #expect(second.dayBytes == 350 && second.monthBytes == 350 && second.reached && second.settings == quota)
        #expect(first.revision == 1 && second.revision == 2 && QuotaLedger(storedText: second.stored.text)?.revision == 2)
        // A patch of the month keeps the day another node set.
        let patched = QuotaLedger.merged(
            stored: second, adding: 0, patch: .object([("month", .integer(1000))]), at: noon + 120, zone: Self.berlin)
        #expect(patched.settings == QuotaSettings(day: 300, month: 1000, monthStartsOn: 1) && patched.dayBytes == 350)
        let raised = QuotaLedger.merged(stored: patched, adding: 0, patch: .object([("day", .integer(1000))]), at: noon, zone: Self.berlin)
        #expect(!raised.reached)
        let tomorrow = QuotaLedger.merged(stored: raised, adding: 5, patch: nil, at: noon + 86_400, zone: Self.berlin)
        #expect(tomorrow.dayBytes == 5 && tomorrow.monthBytes == 355)
        #expect(QuotaLedger(storedText: "not json") == nil)
    }

    @Test func itIsStoredAndReadBackAndABodyIsCheckedFieldByField() throws {
        var ledger = QuotaLedger(settings: QuotaSettings(day: 5 << 30, month: nil, monthStartsOn: 1))
        ledger.add(1234, at: Self.utc(2026, 12, 7, 10), zone: Self.berlin)
        #expect(QuotaLedger(stored: ledger.stored) == ledger)
        let patched = try QuotaSettings(
            json: .object([("month", .integer(1 << 40)), ("monthStartsOn", .integer(28))]), over: ledger.settings)
        #expect(patched == QuotaSettings(day: 5 << 30, month: 1 << 40, monthStartsOn: 28))
        #expect(try QuotaSettings(json: .object([("day", .null)]), over: patched).day == nil)
        for (bad, field) in [
            (JSONValue.object([("day", .integer(0))]), "quota.day"), (.object([("monthStartsOn", .integer(29))]), "quota.monthStartsOn"),
            (.object([("week", .integer(1))]), "quota.week"), (.array([]), "quota"),
        ] {
            do {
                _ = try QuotaSettings(json: bad, over: .none)
                Issue.record("\(bad) was taken")
            } catch let error as SluiceError {
                #expect(error.field == field)
            }
        }
        // Counts never overflow.
        var huge = QuotaLedger(settings: QuotaSettings(day: 1, month: nil, monthStartsOn: 1))
        huge.add(.max, at: 0, zone: Self.berlin)
        huge.add(.max, at: 1, zone: Self.berlin)
        #expect(huge.dayBytes == .max)
    }
}
