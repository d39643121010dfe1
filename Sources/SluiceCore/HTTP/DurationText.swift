/// A duration as a flag gives it: a whole number with `s`, `m`, `h` or `d` (`24h`, `90m`),
/// or plain seconds. At most 366 days, so that nothing computed from it overflows.
public enum DurationText {
    public static func seconds(_ text: String) -> Double? {
        var digits = Substring(text.trimmingPrefix(" "))
        var unit: Double = 1
        if let last = digits.last, let multiplier = ["s": 1.0, "m": 60, "h": 3600, "d": 86400][last] {
            unit = multiplier
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), digits.count <= 9,
            let value = Double(digits)
        else { return nil }
        let seconds = value * unit
        return seconds > 0 && seconds <= 366 * 86400 ? seconds : nil
    }
}
