import Foundation
import Testing

@testable import SluiceCore

/// CONTRACT.md §7: the schedule as a pure function of (rules, zone, instant).
@Suite struct ScheduleEvaluatorTests {
    /// Seconds since 1970 of a UTC date and time.
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0) -> Int64 {
        Int64(CivilDate(year: year, month: month, day: day)!.dayNumber) * 86_400 + Int64(hour * 3600 + minute * 60)
    }

    static func evaluator(_ zone: String, _ rules: [ScheduleRule]) -> ScheduleEvaluator {
        ScheduleEvaluator(Schedule(timeZone: zone, rules: rules))
    }

    @Test func civilDatesRoundTripAndKnowTheirWeekday() {
        #expect(CivilDate(year: 1970, month: 1, day: 1)?.dayNumber == 0)
        #expect(CivilDate(year: 2026, month: 12, day: 7)?.weekday == .mon)
        #expect(CivilDate(year: 2026, month: 3, day: 29)?.weekday == .sun)
        #expect(CivilDate(year: 2024, month: 2, day: 29) != nil)
        #expect(CivilDate(year: 2026, month: 2, day: 29) == nil)
        #expect(CivilDate(year: 1900, month: 2, day: 29) == nil)
        for dayNumber in stride(from: -800_000, through: 800_000, by: 997) {
            let date = CivilDate(dayNumber: dayNumber)
            let (year, month, day) = date.parts
            #expect(CivilDate(year: year, month: month, day: day) == date)
        }
        #expect(CivilDate(dayNumber: -1).weekday == .wed)
    }

    /// Europe/Berlin, 2026: 03-29 02:00-03:00 does not exist; 10-25 02:00-03:00 occurs twice.
    @Test func localTimesInTheGapTakeEffectAfterItAndTwiceOccurringOnesAtTheFirst() throws {
        let berlin = try #require(ScheduleZone(identifier: "Europe/Berlin"))
        let spring = try #require(CivilDate(year: 2026, month: 3, day: 29))
        #expect(berlin.instant(spring, minute: 150) == Self.utc(2026, 3, 29, 1, 0), "02:30 does not exist: 03:00 CEST")
        #expect(berlin.instant(spring, minute: 120) == Self.utc(2026, 3, 29, 1, 0))
        #expect(berlin.instant(spring, minute: 180) == Self.utc(2026, 3, 29, 1, 0), "03:00 CEST is the gap's end")
        #expect(berlin.instant(spring, minute: 90) == Self.utc(2026, 3, 29, 0, 30))
        let autumn = try #require(CivilDate(year: 2026, month: 10, day: 25))
        #expect(berlin.instant(autumn, minute: 150) == Self.utc(2026, 10, 25, 0, 30), "the first 02:30, CEST")
        #expect(berlin.instant(autumn, minute: 180) == Self.utc(2026, 10, 25, 2, 0))
        #expect(berlin.local(Self.utc(2026, 10, 25, 1, 30)).second == 150 * 60, "the second 02:30, CET")
        #expect(berlin.local(Self.utc(2026, 12, 31, 23, 30)).date == CivilDate(year: 2027, month: 1, day: 1))
    }

    @Test func aRuleHoldsFromItsStartToItsEndWrappingPastMidnight() {
        // Fridays 22:00 to 06:00 the next day, in UTC: 2026-12-11 is a Friday.
        let night = Self.evaluator("UTC", [ScheduleRule(days: [.fri], from: 22 * 60, to: 6 * 60, run: false)])
        #expect(night.state(at: Self.utc(2026, 12, 11, 21, 59)).run == nil)
        #expect(night.state(at: Self.utc(2026, 12, 11, 22, 0)).run == Ruled(false, rule: 0))
        #expect(night.state(at: Self.utc(2026, 12, 12, 5, 59)).run == Ruled(false, rule: 0), "Saturday morning is Friday's night")
        #expect(night.state(at: Self.utc(2026, 12, 12, 6, 0)).run == nil)
        #expect(night.state(at: Self.utc(2026, 12, 12, 22, 30)).run == nil, "not on Saturday night")
        // `24:00` is the end of the day; a `to` equal to `from` is a whole day.
        let evening = Self.evaluator("UTC", [ScheduleRule(days: [.mon], from: 18 * 60, to: 1440, maxActive: 1)])
        #expect(evening.state(at: Self.utc(2026, 12, 7, 23, 59)).maxActive == Ruled(1, rule: 0))
        #expect(evening.state(at: Self.utc(2026, 12, 8, 0, 0)).maxActive == nil)
        let allDay = Self.evaluator("UTC", [ScheduleRule(days: [.mon], from: 8 * 60, to: 8 * 60, maxActive: 2)])
        #expect(allDay.state(at: Self.utc(2026, 12, 8, 7, 59)).maxActive == Ruled(2, rule: 0))
        #expect(allDay.state(at: Self.utc(2026, 12, 8, 8, 0)).maxActive == nil)
    }

    /// The contract's example: later rules win field by field; outside every rule, nothing.
    @Test func overlappingRulesWinFieldByFieldLaterFirst() throws {
        let schedule = try Schedule(
            json: JSONValue.parse(
                #"""
                {"timeZone": "Europe/Berlin", "rules": [
                  {"days": ["mon","tue","wed","thu","fri"], "from": "08:00", "to": "18:00", "limitRate": 524288, "maxActive": 1},
                  {"days": "*", "from": "08:00", "to": "02:00", "run": false},
                  {"days": ["mon"], "from": "12:00", "to": "13:00", "limitRate": null}]}
                """#))
        let evaluator = ScheduleEvaluator(schedule)
        // Monday 2026-12-07, CET (UTC+1).
        let morning = evaluator.state(at: Self.utc(2026, 12, 7, 8, 0))  // 09:00 local
        #expect(morning == ScheduleState(limitRate: Ruled(524_288, rule: 0), maxActive: Ruled(1, rule: 0), run: Ruled(false, rule: 1)))
        let lunch = evaluator.state(at: Self.utc(2026, 12, 7, 11, 30))  // 12:30 local
        #expect(lunch == ScheduleState(limitRate: Ruled(nil, rule: 2), maxActive: Ruled(1, rule: 0), run: Ruled(false, rule: 1)))
        let night = evaluator.state(at: Self.utc(2026, 12, 7, 23, 0))  // 00:00 local Tuesday
        #expect(night == ScheduleState(run: Ruled(false, rule: 1)))
        #expect(evaluator.state(at: Self.utc(2026, 12, 8, 1, 0)) == ScheduleState(), "02:00 local: every rule ended")
        #expect(evaluator.nextChange(after: Self.utc(2026, 12, 7, 5, 0)) == Self.utc(2026, 12, 7, 7, 0), "06:00 → 08:00 local")
        #expect(evaluator.nextChange(after: Self.utc(2026, 12, 7, 8, 0)) == Self.utc(2026, 12, 7, 11, 0))
        #expect(evaluator.nextChange(after: Self.utc(2026, 12, 7, 23, 0)) == Self.utc(2026, 12, 8, 1, 0))
        #expect(Self.evaluator("UTC", []).nextChange(after: 0) == nil)
        #expect(
            Self.evaluator("UTC", [ScheduleRule(from: 0, to: 1440, maxActive: 3)]).nextChange(after: 0) == nil,
            "the same all week: no change")
    }

    /// Rules whose boundaries fall in Berlin's 2026 gap and repeated hour.
    @Test func boundariesInTheGapAndTheRepeatedHour() {
        let spring = Self.evaluator("Europe/Berlin", [ScheduleRule(days: [.sun], from: 150, to: 240, maxActive: 2)])
        #expect(spring.state(at: Self.utc(2026, 3, 29, 0, 59)).maxActive == nil)
        #expect(spring.state(at: Self.utc(2026, 3, 29, 1, 0)).maxActive == Ruled(2, rule: 0), "03:00 CEST, after the gap")
        #expect(spring.nextChange(after: Self.utc(2026, 3, 29, 0, 0)) == Self.utc(2026, 3, 29, 1, 0))
        #expect(spring.state(at: Self.utc(2026, 3, 29, 2, 0)).maxActive == nil, "04:00 CEST")
        // 02:30 to 02:45 on the day 02:30 occurs twice: once, the first time.
        let autumn = Self.evaluator("Europe/Berlin", [ScheduleRule(days: [.sun], from: 150, to: 165, limitRate: .set(1000))])
        #expect(autumn.state(at: Self.utc(2026, 10, 25, 0, 35)).limitRate == Ruled(1000, rule: 0), "the first 02:35, CEST")
        #expect(autumn.state(at: Self.utc(2026, 10, 25, 1, 35)).limitRate == nil, "the second 02:35, CET")
        // A rule across the whole repeated hour lasts its two hours of real time.
        let hour = Self.evaluator("Europe/Berlin", [ScheduleRule(days: [.sun], from: 120, to: 180, run: false)])
        #expect(hour.state(at: Self.utc(2026, 10, 25, 0, 0)).run != nil)
        #expect(hour.state(at: Self.utc(2026, 10, 25, 1, 59)).run != nil)
        #expect(hour.state(at: Self.utc(2026, 10, 25, 2, 0)).run == nil)
    }

    /// Against a walk of the wall clock, minute by minute over eight days: a boundary takes
    /// effect at the first minute whose local time reaches it, which is the contract's
    /// daylight-saving rule without its arithmetic. Random rules, zones with gaps, repeated
    /// hours, half-hour changes (Lord Howe) and none.
    @Test(arguments: [
        ("Europe/Berlin", utc(2026, 3, 25)), ("Europe/Berlin", utc(2026, 10, 21)), ("America/New_York", utc(2026, 11, 29)),
        ("Australia/Lord_Howe", utc(2026, 4, 1)), ("Australia/Lord_Howe", utc(2026, 10, 1)), ("UTC", utc(2026, 12, 7)),
        ("Asia/Kathmandu", utc(2026, 1, 1)),
    ])
    func agreesWithAMinuteByMinuteWalk(zoneName: String, start: Int64) throws {
        let zone = try #require(ScheduleZone(identifier: zoneName))
        var random = SeededRandom(seed: UInt64(start) ^ UInt64(zoneName.utf8.count))
        let minutes = 10 * 1440
        let walk = (0..<minutes).map { start - 86_400 + Int64($0) * 60 }
        let wall = walk.map { $0 + zone.offset(at: $0) }
        func firstReaching(_ date: CivilDate, _ minute: Int) -> Int64? {
            let target = Int64(date.dayNumber) * 86_400 + Int64(minute) * 60
            return wall.firstIndex { $0 >= target }.map { walk[$0] }
        }
        for round in 0..<8 {
            let rules = (0..<(1 + round % 5)).map { _ in
                let days = Set(Weekday.allCases.filter { _ in random.next() % 2 == 0 })
                return ScheduleRule(
                    days: days.isEmpty ? [.mon] : days, from: Int(random.next() % 96) * 15, to: Int(random.next() % 97) * 15,
                    limitRate: random.next() % 2 == 0 ? .set(Int64(random.next() % 1000 + 1)) : nil, maxActive: Int(random.next() % 3 + 1))
            }
            let evaluator = ScheduleEvaluator(Schedule(timeZone: zoneName, rules: rules))
            // The walk's spans: each occurrence from the first minute reaching its start to the
            // first reaching its end.
            var spans: [[Range<Int64>]] = []
            for rule in rules {
                var ruleSpans: [Range<Int64>] = []
                let first = zone.local(walk[0]).date
                for shift in 0..<10 {
                    let date = first.adding(days: shift)
                    guard rule.days.contains(date.weekday) else { continue }
                    let end = rule.end(startingOn: date)
                    // An end past the walk's last minute: open.
                    let to = firstReaching(end.date, end.minute) ?? .max
                    guard let from = firstReaching(date, rule.from), from < to else { continue }
                    ruleSpans.append(from..<to)
                }
                spans.append(ruleSpans)
            }
            let checked = 1440..<(9 * 1440)
            let states = checked.map { evaluator.state(at: walk[$0]) }
            for index in checked {
                let instant = walk[index]
                var expected = ScheduleState()
                for (ruleIndex, rule) in rules.enumerated() where spans[ruleIndex].contains(where: { $0.contains(instant) }) {
                    if let rate = rule.limitRate { expected.limitRate = Ruled(rate.value, rule: ruleIndex) }
                    if let maxActive = rule.maxActive { expected.maxActive = Ruled(maxActive, rule: ruleIndex) }
                }
                guard states[index - 1440] == expected else {
                    Issue.record(
                        "\(zoneName) round \(round) at \(instant): \(states[index - 1440]) but the walk says \(expected); \(rules)")
                    return
                }
            }
            // And `nextChange` is the walk's next minute with another state.
            for index in stride(from: checked.lowerBound, to: checked.lowerBound + 1440, by: 37) {
                let now = states[index - 1440]
                guard let later = (index + 1..<checked.upperBound).first(where: { !states[$0 - 1440].setsTheSame(as: now) }) else {
                    continue
                }
                #expect(evaluator.nextChange(after: walk[index]) == walk[later], "\(zoneName) round \(round)")
            }
        }
    }

    /// An instant far in the past (a `startAt` in year 236) reads back as RFC 3339 writes it.
    @Test func instantsOfEveryYearRoundTripAsRFC3339() throws {
        for text in [
            "0236-10-07T15:09:38Z", "0080-05-26T18:34:04Z", "0001-01-01T00:00:00Z", "2026-12-07T10:00:00Z", "9999-12-31T23:59:59Z",
        ] {
            let date = try #require(RFC3339.date(text))
            #expect(JSONValue(date).stringValue == text)
        }
        #expect(RFC3339.date("2026-12-07T10:00:00+01:00") == RFC3339.date("2026-12-07T09:00:00Z"))
        #expect(RFC3339.date("2026-12-07T10:00:00.250Z")!.timeIntervalSince1970.truncatingRemainder(dividingBy: 1) == 0.25)
        for bad in [
            "236-10-07T15:09:38Z", "2026-12-07", "2026-12-07T10:00:00", "2026-02-30T00:00:00Z", "2026-12-07T24:00:00Z",
            "0000-01-01T00:00:00Z",
        ] {
            #expect(RFC3339.date(bad) == nil, "\(bad)")
        }
    }

    @Test func rcloneTimetablesBecomeRulesThatHoldUntilTheNextEntry() throws {
        let evaluator = ScheduleEvaluator(
            Schedule(timeZone: "UTC", rules: try RcloneTimetable.rules("Mon-08:00,512K 12:00,10M Sat-00:00,off")))
        func rate(_ day: Int, _ hour: Int) -> Int64?? { evaluator.state(at: Self.utc(2026, 12, day, hour)).limitRate?.value }
        #expect(rate(7, 9) == .some(524_288), "Monday 09:00")
        #expect(rate(7, 13) == .some(10 << 20), "Monday 13:00: every day's 12:00")
        #expect(rate(8, 7) == .some(10 << 20), "Tuesday 07:00, still Monday's 12:00")
        #expect(rate(12, 1) == .some(nil), "Saturday 01:00: off")
        #expect(rate(12, 13) == .some(10 << 20), "Saturday 13:00: the daily 12:00 again")
        #expect(rate(14, 7) == .some(10 << 20), "Monday 07:00: Sunday's 12:00, wrapping the week")
        // A timetable's entry that spans days is a rule a day: their midnights, and the daily
        // 12:00s that set the same 10M, change no value. From Tuesday 13:00 the next change is
        // Saturday 00:00 (off); it was Wednesday's midnight, where only the rule changed.
        #expect(evaluator.nextChange(after: Self.utc(2026, 12, 8, 13)) == Self.utc(2026, 12, 12))
        let lone = try RcloneTimetable.rules("666")
        #expect(ScheduleEvaluator(Schedule(timeZone: "UTC", rules: lone)).state(at: 12345).limitRate?.value == .some(666 * 1024))
        #expect(RcloneTimetable.rate("10M:100k") == .set(100 * 1024))
        #expect(RcloneTimetable.rate("100B") == .set(100))
        #expect(RcloneTimetable.rate("1Mi") == .set(1 << 20))
        #expect(RcloneTimetable.rate("0") == .removed)
        for bad in [
            "", "bad", "bad,bad", "1000X", "25:00,1M", "10:61,1M", "Foo-10:00,1M", "Mon-10:20,bad", "1M 12:00,2M", "99999999999999T",
        ] {
            #expect(throws: SluiceError.self, "\(bad)") { try RcloneTimetable.rules(bad) }
        }
    }

    @Test func aScheduleBodyIsCheckedFieldByFieldAndReadsBackAsItWasGiven() throws {
        let body =
            #"{"timeZone":"Europe/Berlin","rules":[{"days":["mon","fri"],"from":"08:00","to":"24:00","limitRate":null,"maxActive":2,"run":true}]}"#
        let schedule = try Schedule(json: JSONValue.parse(body))
        #expect(schedule.json.text == body)
        #expect(try Schedule(json: schedule.json) == schedule)
        let timetable = try Schedule(json: JSONValue.parse(#"{"timetable":"Mon-08:00,1M"}"#))
        #expect(timetable.timeZone == "UTC")
        #expect(timetable.json.text == #"{"timeZone":"UTC","timetable":"Mon-08:00,1M"}"#)
        for (bad, field) in [
            (#"{"timeZone":"Mars/Olympus","rules":[]}"#, "timeZone"), (#"{"rules":[],"extra":1}"#, "extra"),
            (#"{"rules":[],"timetable":"1M"}"#, "timetable"), (#"{"rules":{}}"#, "rules"),
            (#"{"rules":[{"from":"08:00","to":"09:00"}]}"#, "rules[0]"),
            (#"{"rules":[{"from":"8:00","to":"09:00","run":false}]}"#, "rules[0].from"),
            (#"{"rules":[{"from":"24:00","to":"09:00","run":false}]}"#, "rules[0].from"),
            (#"{"rules":[{"from":"08:00","to":"24:01","run":false}]}"#, "rules[0].to"),
            (#"{"rules":[{"days":["someday"],"from":"08:00","to":"09:00","run":false}]}"#, "rules[0].days"),
            (#"{"rules":[{"days":[],"from":"08:00","to":"09:00","run":false}]}"#, "rules[0].days"),
            (#"{"rules":[{"from":"08:00","to":"09:00","limitRate":0}]}"#, "rules[0].limitRate"),
            (#"{"rules":[{"from":"08:00","to":"09:00","maxActive":65}]}"#, "rules[0].maxActive"),
            (#"{"rules":[{"from":"08:00","to":"09:00","run":"no"}]}"#, "rules[0].run"),
            (#"{"rules":[{"from":"08:00","to":"09:00","run":false,"when":1}]}"#, "rules[0].when"),
        ] {
            #expect(throws: SluiceError.self, "\(bad)") { try Schedule(json: JSONValue.parse(bad)) }
            do {
                _ = try Schedule(json: JSONValue.parse(bad))
            } catch let error as SluiceError {
                #expect(error.field == field, "\(bad): \(error)")
            }
        }
    }
}

/// A deterministic generator for the walk's rules (SplitMix64).
struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension JSONValue {
    /// A JSON text as the API reads a body.
    static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }
}
