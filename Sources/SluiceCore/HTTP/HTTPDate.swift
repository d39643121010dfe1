/// HTTP dates (RFC 9110 §5.6.7) as whole seconds since the Unix epoch.
///
/// Formatting always produces an IMF-fixdate. Parsing accepts the IMF-fixdate and the two
/// obsolete forms (RFC 850 and asctime) that recipients must still understand. Written by
/// hand so that it is pure, allocation-light and needs no locale-dependent formatter.
public enum HTTPDate {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let longWeekdays = [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    ]
    private static let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// 9999-12-31 23:59:59 GMT: the last date with the four-digit year an IMF-fixdate has.
    public static let latestFormattable: Int64 = 253_402_300_799

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for the given seconds since 1970, clamped to years
    /// 0001 to 9999 so that no file date can overflow the arithmetic.
    public static func format(_ seconds: Int64) -> String {
        let seconds = min(max(seconds, -62_135_596_800), latestFormattable)
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        return "\(weekday), \(pad(day)) \(months[month - 1]) \(year) "
            + "\(pad(secondOfDay / 3600)):\(pad(secondOfDay / 60 % 60)):\(pad(secondOfDay % 60)) GMT"
    }

    /// Seconds since 1970 for an HTTP date in any of the three accepted forms, or nil.
    public static func parse(_ text: some StringProtocol) -> Int64? {
        let trimmed = text.trimmingSpaces()
        if let commaIndex = trimmed.firstIndex(of: ",") {
            let weekday = String(trimmed[..<commaIndex])
            let rest = trimmed[trimmed.index(after: commaIndex)...].trimmingSpaces()
            if weekdays.contains(weekday) {
                return parseIMF(rest)
            }
            if longWeekdays.contains(weekday) {
                return parseRFC850(rest)
            }
            return nil
        }
        return parseAsctime(trimmed)
    }

    // "06 Nov 1994 08:49:37 GMT"
    private static func parseIMF(_ text: Substring) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[4] == "GMT", parts[0].count == 2, parts[2].count == 4,
            let day = Int(parts[0]), let month = monthNumber(parts[1]), let year = Int(parts[2])
        else { return nil }
        return assemble(year: year, month: month, day: day, time: parts[3])
    }

    // "06-Nov-94 08:49:37 GMT"
    private static func parseRFC850(_ text: Substring) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2] == "GMT" else { return nil }
        let dateParts = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard dateParts.count == 3, dateParts[0].count == 2, dateParts[2].count == 2,
            let day = Int(dateParts[0]), let month = monthNumber(dateParts[1]),
            let shortYear = Int(dateParts[2])
        else { return nil }
        // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in the past.
        let year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
        return assemble(year: year, month: month, day: day, time: parts[1])
    }

    // "Sun Nov  6 08:49:37 1994"
    private static func parseAsctime(_ text: Substring) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 5, weekdays.contains(String(parts[0])),
            let month = monthNumber(parts[1]), let day = Int(parts[2]), parts[4].count == 4,
            let year = Int(parts[4])
        else { return nil }
        return assemble(year: year, month: month, day: day, time: parts[3])
    }

    private static func assemble(year: Int, month: Int, day: Int, time: Substring?) -> Int64? {
        guard let time else { return nil }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCIIDigit) }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second < 61, (1...31).contains(day), year >= 1
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59))
    }

    private static func monthNumber(_ name: Substring) -> Int? {
        months.firstIndex(of: String(name)).map { $0 + 1 }
    }

    private static func pad(_ value: some BinaryInteger) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Character {
    var isASCIIDigit: Bool { self >= "0" && self <= "9" }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingSpaces() -> Substring {
        let s = Substring(self)
        guard let start = s.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return s[s.endIndex...] }
        let end = s.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return s[start...end]
    }
}
