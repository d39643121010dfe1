/// One rule of the schedule (CONTRACT.md §7): it holds during `[from, to)` on each of its
/// days (the day `from` falls on; a `to` at or before `from` ends the next day; `24:00` is the
/// end of the day) and sets what it names: the queue's `limitRate` (`.removed`: unlimited),
/// `maxActive`, and `run` (`false`: a closed window).
public struct ScheduleRule: Sendable, Equatable {
    public var days: Set<Weekday>
    /// Minutes since local midnight, 0..<1440.
    public var from: Int
    /// Minutes since local midnight, 0...1440.
    public var to: Int
    public var limitRate: Patched<Int64>?
    public var maxActive: Int?
    public var run: Bool?

    public init(
        days: Set<Weekday> = Set(Weekday.allCases), from: Int, to: Int, limitRate: Patched<Int64>? = nil, maxActive: Int? = nil,
        run: Bool? = nil
    ) {
        self.days = days
        self.from = from
        self.to = to
        self.limitRate = limitRate
        self.maxActive = maxActive
        self.run = run
    }

    /// The local day and minute the occurrence starting on `date` ends.
    func end(startingOn date: CivilDate) -> (date: CivilDate, minute: Int) {
        if to == 1440 { return (date.adding(days: 1), 0) }
        return to > from ? (date, to) : (date.adding(days: 1), to)
    }

    /// `HH:MM` as minutes since midnight; `24:00` only where `allowingEnd`.
    public static func minutes(_ text: some StringProtocol, allowingEnd: Bool) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
            let hours = Int(parts[0]), let minutes = Int(parts[1]), minutes < 60
        else { return nil }
        if hours == 24, minutes == 0, allowingEnd { return 1440 }
        return hours < 24 ? hours * 60 + minutes : nil
    }

    public static func text(minutes: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(minutes / 60)):\(two(minutes % 60))"
    }
}
