/// A day of the proleptic Gregorian calendar, with no time zone: what a schedule's rules
/// name. Its arithmetic is on whole days, so a day is a day whatever the clocks do.
public struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let dayNumber: Int

    public init(dayNumber: Int) { self.dayNumber = dayNumber }

    /// Nil for a month or day that does not exist.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else { return nil }
        dayNumber = Int(HTTPDate.daysFromCivil(year: year, month: month, day: day))
    }

    public var parts: (year: Int, month: Int, day: Int) {
        let (year, month, day) = HTTPDate.civil(fromDays: Int64(dayNumber))
        return (Int(year), month, day)
    }

    public var weekday: Weekday {
        // 1970-01-01 was a Thursday.
        Weekday.allCases[((dayNumber % 7) + 7 + 3) % 7]
    }

    public func adding(days: Int) -> CivilDate { CivilDate(dayNumber: dayNumber + days) }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public var description: String {
        let (year, month, day) = parts
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))"
    }
}

/// A day of the week, as a schedule's rules name it (`mon` … `sun`).
public enum Weekday: String, CaseIterable, Sendable, Codable {
    case mon, tue, wed, thu, fri, sat, sun

    /// `mon`, `Mon` or `Monday`; nil for anything else.
    public init?(name: some StringProtocol) {
        let lowered = name.lowercased()
        guard let day = Self.allCases.first(where: { lowered == $0.rawValue || lowered == $0.fullName }) else { return nil }
        self = day
    }

    public var fullName: String {
        switch self {
        case .mon: "monday"
        case .tue: "tuesday"
        case .wed: "wednesday"
        case .thu: "thursday"
        case .fri: "friday"
        case .sat: "saturday"
        case .sun: "sunday"
        }
    }
}
