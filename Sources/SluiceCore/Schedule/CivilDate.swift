/// A day of the proleptic Gregorian calendar, with no time zone: what a schedule's rules
/// name. Its arithmetic is on whole days, so a day is a day whatever the clocks do.
public struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let dayNumber: Int

    public init(dayNumber: Int) { self.dayNumber = dayNumber }

    /// Nil for a month or day that does not exist.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else { return nil }
        // Days from the civil date (H. Hinnant's algorithm, years starting in March).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        dayNumber = era * 146_097 + dayOfEra - 719_468
    }

    public var parts: (year: Int, month: Int, day: Int) {
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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
