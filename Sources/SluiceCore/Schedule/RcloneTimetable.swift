/// rclone's `--bwlimit` timetable as a schedule's rules: entries separated by spaces (or
/// semicolons), each `[DAY-]HH:MM,RATE`, where a rate is `off` (unlimited), a size with
/// `B`, `K`, `M`, `G`, `T` (powers of 1024; a bare number is KiB, as rclone reads it), or
/// rclone's `UPLOAD:DOWNLOAD` pair, of which the download is taken. An entry without a day
/// is one for every day; a lone `RATE` holds all week. Each entry's rate holds until the
/// next entry, wrapping the week.
public enum RcloneTimetable {
    /// At most this many entries.
    public static let maximumEntries = 100

    public static func rules(_ text: String) throws -> [ScheduleRule] {
        func refuse(_ message: String) -> SluiceError {
            SluiceError(.invalidField, "timetable: \(message)", field: "timetable")
        }
        let entries = text.split(whereSeparator: { $0 == " " || $0 == ";" })
        guard !entries.isEmpty else { throw refuse("it has no entries") }
        guard entries.count <= maximumEntries else { throw refuse("at most \(maximumEntries) entries") }
        // Each entry as points of the week (minutes since Monday 00:00) and its rate.
        var points: [(minute: Int, rate: Patched<Int64>)] = []
        for entry in entries {
            let parts = entry.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw refuse("\(entry) is not [DAY-]HH:MM,RATE") }
            guard let rate = self.rate(parts[parts.count - 1]) else { throw refuse("\(parts[parts.count - 1]) is not a rate") }
            guard parts.count == 2 else {
                guard entries.count == 1 else { throw refuse("\(entry) has no time, and is not the only entry") }
                points.append((0, rate))
                continue
            }
            var time = parts[0]
            var days = Weekday.allCases
            if let dash = time.firstIndex(of: "-") {
                guard let day = Weekday(name: time[..<dash]) else { throw refuse("\(time[..<dash]) is not a day") }
                days = [day]
                time = time[time.index(after: dash)...]
            }
            guard let minute = ScheduleRule.minutes(time, allowingEnd: false) else { throw refuse("\(time) is not a time HH:MM") }
            for day in days {
                points.append((Weekday.allCases.firstIndex(of: day)! * 1440 + minute, rate))
            }
        }
        // A later entry at the same point of the week wins, as a later rule does.
        var byMinute: [Int: Patched<Int64>] = [:]
        for point in points { byMinute[point.minute] = point.rate }
        let sorted = byMinute.sorted { $0.key < $1.key }
        var rules: [ScheduleRule] = []
        for (index, point) in sorted.enumerated() {
            let week = 7 * 1440
            let end = index + 1 < sorted.count ? sorted[index + 1].key : sorted[0].key + week
            rules += span(from: point.key, to: end, rate: point.value)
        }
        return rules
    }

    /// Rules for `[from, to)` in minutes of the week (`to` may pass the week's end), one a day.
    static func span(from: Int, to: Int, rate: Patched<Int64>) -> [ScheduleRule] {
        var rules: [ScheduleRule] = []
        var start = from
        while start < to {
            let dayStart = start / 1440 * 1440
            let end = min(to, dayStart + 1440)
            let day = Weekday.allCases[(start / 1440) % 7]
            rules.append(ScheduleRule(days: [day], from: start - dayStart, to: end - dayStart, limitRate: rate))
            start = end
        }
        return rules
    }

    /// `off`, `0` (rclone's unlimited too), a size, or `UP:DOWN`; nil for anything else.
    static func rate(_ text: some StringProtocol) -> Patched<Int64>? {
        let sides = text.split(separator: ":", omittingEmptySubsequences: false)
        guard sides.count <= 2, let download = sides.last else { return nil }
        let lowered = download.lowercased()
        if lowered == "off" { return .removed }
        let number = lowered.prefix(while: { $0.isASCII && $0.isNumber })
        guard !number.isEmpty else { return nil }
        // rclone's units in `ByteSize`'s grammar: `KB`, `KiB`, `Ki` are `K`; a bare number is
        // KiB; `B` is bytes.
        var unit = lowered.dropFirst(number.count)
        if unit.hasSuffix("b"), unit.count > 1 { unit = unit.dropLast() }
        if unit.hasSuffix("i") { unit = unit.dropLast() }
        let suffix: Substring
        switch unit {
        case "": suffix = "K"
        case "b": suffix = ""
        case "k", "m", "g", "t": suffix = unit
        default: return nil
        }
        guard let bytes = ByteSize.parse(number + suffix, limit: RateLimit.maximum) else { return nil }
        return bytes == 0 ? .removed : .set(bytes)
    }
}
