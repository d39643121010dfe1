/// The schedule as a pure function of (rules, time zone, instant): what is in effect at an
/// instant, and when that next changes. State, not edges: nothing here remembers what was
/// in effect before, so a restart, a step of the wall clock or a new table is evaluated
/// the same way as any other instant.
public struct ScheduleEvaluator: Sendable {
    public let zone: ScheduleZone
    public let rules: [ScheduleRule]

    public init(_ schedule: Schedule) {
        zone = schedule.zone
        rules = schedule.rules
    }

    /// What is in effect at `instant` (seconds since 1970 UTC).
    public func state(at instant: Int64) -> ScheduleState {
        let today = zone.local(instant).date
        var state = ScheduleState()
        for (index, rule) in rules.enumerated() {
            // An occurrence that holds now started today, or yesterday and wrapped; tomorrow's
            // only where the zone's midnight moves.
            let holds = (-1...1).contains { shift in
                guard let span = occurrence(of: rule, on: today.adding(days: shift)) else { return false }
                return span.contains(instant)
            }
            guard holds else { continue }
            if let rate = rule.limitRate { state.limitRate = Ruled(rate.value, rule: index) }
            if let maxActive = rule.maxActive { state.maxActive = Ruled(maxActive, rule: index) }
            if let run = rule.run { state.run = Ruled(run, rule: index) }
        }
        return state
    }

    /// The first instant after `instant` at which what the schedule sets differs from what
    /// it sets at `instant` (`setsTheSame`: the values, not which rule gives them); nil when
    /// nothing changes within the next eight days (a week that is the same all through).
    public func nextChange(after instant: Int64) -> Int64? {
        let now = state(at: instant)
        return boundaries(after: instant).first { !state(at: $0).setsTheSame(as: now) }
    }

    /// Every instant after `instant`, within eight days, at which a rule starts or ends.
    public func boundaries(after instant: Int64) -> [Int64] {
        let today = zone.local(instant).date
        var instants = Set<Int64>()
        for rule in rules {
            for shift in -1...8 {
                guard let span = occurrence(of: rule, on: today.adding(days: shift)) else { continue }
                if span.lowerBound > instant { instants.insert(span.lowerBound) }
                if span.upperBound > instant { instants.insert(span.upperBound) }
            }
        }
        return instants.sorted()
    }

    /// The instants the rule holds for when it starts on `date`; nil when it does not start
    /// that day, or its span falls inside a daylight-saving gap.
    func occurrence(of rule: ScheduleRule, on date: CivilDate) -> Range<Int64>? {
        guard rule.days.contains(date.weekday) else { return nil }
        let start = zone.instant(date, minute: rule.from)
        let end = rule.end(startingOn: date)
        let stop = zone.instant(end.date, minute: end.minute)
        return start < stop ? start..<stop : nil
    }
}
