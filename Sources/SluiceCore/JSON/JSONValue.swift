public import Foundation

/// A JSON document whose objects keep their keys in the order they were built, so the
/// API's answers read the same every time (Foundation's encoder orders keys by hash).
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.text == rhs.text }

    /// The compact text: no spaces, `/` unescaped, non-ASCII as UTF-8.
    public var text: String {
        var output = ""
        write(to: &output)
        return output
    }

    public func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .number(let value): Self.writeNumber(value, to: &output)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(key, to: &output)
                output += ":"
                value.write(to: &output)
            }
            output += "}"
        }
    }

    /// Whole numbers without a fraction (`104857600`, not `104857600.0`); NaN and
    /// infinities, which JSON cannot hold, as null.
    private static func writeNumber(_ value: Double, to output: inout String) {
        guard value.isFinite else {
            output += "null"
            return
        }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            output += String(Int64(value))
        } else {
            output += "\(value)"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                output +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue {
    public init(_ value: String?) { self = value.map(JSONValue.string) ?? .null }
    public init(_ value: Int64?) { self = value.map(JSONValue.integer) ?? .null }
    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: Double?) { self = value.map(JSONValue.number) ?? .null }

    /// An ISO 8601 UTC date with whole seconds: `2026-11-22T10:00:00Z`.
    public init(_ date: Date?) {
        guard let date else {
            self = .null
            return
        }
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
        let second = seconds - days * 86_400
        let (year, month, day) = HTTPDate.civil(fromDays: days)
        func two(_ value: some BinaryInteger) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // RFC 3339 years have four digits: a `startAt` in year 236 is `0236-…` (it was `236-…`,
        // which no date-time parser reads; schemathesis found it).
        let digits = String(year)
        let fourDigits = year >= 0 && digits.count < 4 ? String(repeating: "0", count: 4 - digits.count) + digits : digits
        self = .string("\(fourDigits)-\(two(month))-\(two(day))T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))Z")
    }
}
