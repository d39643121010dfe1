import Foundation

/// aria2's size syntax for options: a whole number of bytes, or with `K` or `M` (1,024 and
/// 1,048,576, either case); `0` is unlimited where a limit is meant. Values arrive as
/// strings (aria2's clients send every option so) or as numbers.
public enum Aria2Size {
    public static func parse(_ text: String) -> Int64? {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        var unit: Int64 = 1
        switch digits.last {
        case "K", "k":
            unit = 1024
            digits = digits.dropLast()
        case "M", "m":
            unit = 1 << 20
            digits = digits.dropLast()
        default: break
        }
        guard !digits.isEmpty, digits.count <= 18, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(digits)
        else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: unit)
        return overflow ? nil : bytes
    }
}
