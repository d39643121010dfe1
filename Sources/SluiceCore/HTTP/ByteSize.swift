/// Byte counts written as `123`, `64K`, `10M`, `1G` or `1T` (powers of 1024).
public enum ByteSize {
    /// The number of bytes, or nil for anything malformed, negative or larger than `limit`.
    public static func parse(_ text: some StringProtocol, limit: Int64 = 1 << 40) -> Int64? {
        var digits = Substring(text)
        var multiplier: Int64 = 1
        switch digits.last {
        case "K", "k": multiplier = 1 << 10
        case "M", "m": multiplier = 1 << 20
        case "G", "g": multiplier = 1 << 30
        case "T", "t": multiplier = 1 << 40
        default: break
        }
        if multiplier != 1 { digits = digits.dropLast() }
        guard let value = saturatingInt(digits) else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow, bytes <= limit else { return nil }
        return bytes
    }

    /// `1.5 GiB`-style text for people.
    public static func human(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let rounded = (value * 10).rounded() / 10
        return "\(rounded) \(units[unit])"
    }
}
