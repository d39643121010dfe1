import Foundation
import SluiceCore
import Testing

@testable import JobService

/// What the queue runs with: its own settings under the schedule under an override
/// (CONTRACT.md §7, "Manual changes"), as tables of (state, override, instant) → values.
@Suite struct QueueInEffectTests {
    static let own = QueueSettings(paused: false, maxActive: 3, limitRate: 1000)
    static let noon = Date(timeIntervalSince1970: 1_796_212_800)  // 2026-12-01T12:00:00Z

    @Test func rulesWinFieldByFieldAndAClosedWindowHoldsJobs() {
        let plain = QueueInEffect.resolve(own: Self.own, schedule: ScheduleState(), override: nil, now: Self.noon, next: nil)
        #expect(plain.settings == Self.own)
        #expect(plain.maxActiveSetBy == .queue && plain.limitRateSetBy == .queue && plain.runSetBy == .queue)
        let ruled = QueueInEffect.resolve(
            own: Self.own, schedule: ScheduleState(limitRate: Ruled(nil, rule: 1), run: Ruled(false, rule: 2)), override: nil,
            now: Self.noon, next: nil)
        #expect(ruled.limitRate == nil && ruled.limitRateSetBy == .rule(1))
        #expect(ruled.maxActive == 3 && ruled.maxActiveSetBy == .queue)
        #expect(!ruled.run && ruled.runSetBy == .rule(2))
        #expect(ruled.settings == QueueSettings(paused: false, maxActive: 3, limitRate: nil), "the window is a hold, not a setting")
        #expect(ruled.holds == QueueHolds(windowClosed: true))
        #expect(ruled.windowClosedReason == "the schedule's window is closed (rules[2])")
    }

    @Test func anOverrideHoldsForItsFieldsUntilItEnds() {
        let state = ScheduleState(limitRate: Ruled(500, rule: 0), maxActive: Ruled(1, rule: 0))
        let override = QueueOverride(maxActive: true, until: Self.noon.addingTimeInterval(60))
        let during = QueueInEffect.resolve(own: Self.own, schedule: state, override: override, now: Self.noon, next: nil)
        #expect(during.maxActive == 3 && during.maxActiveSetBy == .override)
        #expect(during.limitRate == 500 && during.limitRateSetBy == .rule(0), "a field the PATCH did not name stays the rule's")
        #expect(during.overrideUntil == override.until)
        let after = QueueInEffect.resolve(
            own: Self.own, schedule: state, override: override, now: Self.noon.addingTimeInterval(60), next: nil)
        #expect(after.maxActive == 1 && after.maxActiveSetBy == .rule(0) && after.overrideUntil == nil)
    }

    /// A PATCH overrides only what a rule sets now, until the body's `until` or the next change.
    @Test func aPatchOverridesWhatARuleSetsNowUntilTheNextChange() throws {
        let schedule = try Schedule(
            json: JSONDecoder().decode(
                JSONValue.self, from: Data(#"{"rules":[{"from":"08:00","to":"18:00","maxActive":1,"run":false}]}"#.utf8)))
        var timetable = QueueSchedule(schedule)
        let nine = Date(timeIntervalSince1970: 1_796_202_000)  // 2026-12-01T09:00:00Z
        timetable.evaluate(at: nine)
        #expect(timetable.next == Date(timeIntervalSince1970: 1_796_234_400), "18:00 UTC")
        timetable.overridden(by: QueueSettingsPatch(limitRate: .set(5)), until: nil, at: nine)
        #expect(timetable.override == nil, "no rule sets limitRate: the queue's own value is simply changed")
        timetable.overridden(by: QueueSettingsPatch(paused: false, maxActive: 4), until: nil, at: nine)
        #expect(timetable.override == QueueOverride(maxActive: true, run: true, until: Date(timeIntervalSince1970: 1_796_234_400)))
        let soon = nine.addingTimeInterval(600)
        timetable.overridden(by: QueueSettingsPatch(maxActive: 5), until: soon, at: nine)
        #expect(timetable.override?.until == soon, "the body's until")
        let changed = timetable.evaluate(at: soon)
        #expect(changed, "the override ran out: a change")
        #expect(timetable.override == nil)
        // A new table ends an override of the old one.
        timetable.overridden(by: QueueSettingsPatch(maxActive: 5), until: nil, at: soon)
        timetable.replace(with: schedule, at: soon)
        #expect(timetable.override == nil)
    }
}

/// CONTRACT.md §7, `heldBy`: one reason per queued job.
@Suite struct QueueHoldsTests {
    static let now = Date(timeIntervalSince1970: 1_796_212_800)

    static func job(_ state: JobState = .queued, startAt: Date? = nil, ignoring: Bool = false, waitingFor: [String] = []) -> JobSnapshot {
        var job = JobSnapshot(id: "j", url: "http://example.com/x", state: state, connections: 1, priority: 0, createdAt: now)
        job.startAt = startAt
        job.ignoreSchedule = ignoring
        job.waitingFor = waitingFor
        return job
    }

    @Test(arguments: [
        (job(), false, nil), (job(.running), true, nil), (job(.paused, startAt: now + 60), true, nil),
        (job(startAt: now + 60), true, JobHold.startAt), (job(startAt: now - 60), false, nil),
        (job(startAt: now), false, nil), (job(), true, .window), (job(ignoring: true), true, nil),
        (job(waitingFor: ["a"]), false, .dependencies), (job(waitingFor: ["a"]), true, .window),
        (job(startAt: now + 1, waitingFor: ["a"]), true, .startAt),
    ])
    func oneReasonPerQueuedJob(job: JobSnapshot, windowClosed: Bool, expected: JobHold?) {
        #expect(QueueHolds(windowClosed: windowClosed).heldBy(job, now: Self.now) == expected)
    }
}
