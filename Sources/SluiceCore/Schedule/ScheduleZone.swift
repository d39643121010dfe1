public import Foundation

/// A time zone as a schedule reads it: an instant's local day and time, and the instant a
/// local time takes effect, with CONTRACT.md §7's daylight-saving rules: a local time that
/// does not exist that day (spring forward) takes effect at the first instant after the
/// gap; one that occurs twice (fall back) takes effect once, at its first occurrence.
/// Instants are whole seconds since 1970-01-01 UTC.
public struct ScheduleZone: Sendable {
    public let zone: TimeZone

    public init(_ zone: TimeZone) { self.zone = zone }

    /// An IANA name (`Europe/Berlin`, `UTC`); nil for one this system does not know.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
    }

    /// Seconds east of UTC at `instant`.
    public func offset(at instant: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))))
    }

    /// The local day of `instant` and the seconds since its local midnight.
    public func local(_ instant: Int64) -> (date: CivilDate, second: Int64) {
        let wall = instant + offset(at: instant)
        let (day, second) = wall.quotientAndRemainder(dividingBy: 86_400)
        return second < 0 ? (CivilDate(dayNumber: Int(day) - 1), second + 86_400) : (CivilDate(dayNumber: Int(day)), second)
    }

    /// The instant local `minute` (0...1440) of `date` takes effect.
    public func instant(_ date: CivilDate, minute: Int) -> Int64 {
        let wall = Int64(date.dayNumber) * 86_400 + Int64(minute) * 60
        // Offsets change at most once within a day either side here: the candidates are the
        // offsets a day before and a day after.
        let before = offset(at: wall - 86_400)
        let after = offset(at: wall + 86_400)
        let valid = [wall - before, wall - after].filter { $0 + offset(at: $0) == wall }
        if let first = valid.min() { return first }
        // In a gap (`after` > `before`): the first instant whose offset is the later one.
        var low = wall - after
        var high = wall - before
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if offset(at: middle) == before { low = middle } else { high = middle }
        }
        return high
    }
}
