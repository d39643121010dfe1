public import Foundation

/// An instant as RFC 3339 writes it (`2026-12-01T02:00:00+01:00`, `…Z`, a fraction of a
/// second allowed): what `startAt` and `until` take. Strict: a `T` (or `t`, or a space as
/// RFC 3339 §5.6 notes), two-digit fields, a zone always; years 1 to 9999.
public enum RFC3339 {
    public static func date(_ text: some StringProtocol) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), bytes[4] == UInt8(ascii: "-"), let month = number(5..<7), bytes[7] == UInt8(ascii: "-"),
            let day = number(8..<10), [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(bytes[10]),
            let hour = number(11..<13), bytes[13] == UInt8(ascii: ":"), let minute = number(14..<16),
            bytes[16] == UInt8(ascii: ":"), let second = number(17..<19),
            year >= 1, hour < 24, minute < 60, second < 61,
            let date = CivilDate(year: year, month: month, day: day)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == UInt8(ascii: ".") {
            let start = index + 1
            index = start
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
            guard index > start, index - start <= 9, let digits = number(start..<index) else { return nil }
            fraction = Double(digits) / pow(10, Double(index - start))
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, let hours = number(index + 1..<index + 3), bytes[index + 3] == UInt8(ascii: ":"),
                let minutes = number(index + 4..<index + 6), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        default: return nil
        }
        let seconds = date.dayNumber * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }
}
