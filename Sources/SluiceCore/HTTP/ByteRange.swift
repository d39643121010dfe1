/// An inclusive range of byte offsets, as in `Content-Range: bytes first-last/length`.
public struct ByteRange: Hashable, Sendable, CustomStringConvertible {
    public var first: Int64
    public var last: Int64

    public init(first: Int64, last: Int64) {
        precondition(first >= 0 && last >= first, "invalid byte range \(first)-\(last)")
        self.first = first
        self.last = last
    }

    /// The number of bytes in the range.
    public var count: Int64 { last - first + 1 }

    public var description: String { "\(first)-\(last)" }
}

/// One element of a `Range: bytes=...` set (RFC 9110 §14.1.1).
public enum RangeSpec: Hashable, Sendable {
    /// `first-last` or, with `last == nil`, `first-`.
    case fromTo(first: Int64, last: Int64?)
    /// `-length`: the last `length` bytes.
    case suffix(length: Int64)
}

/// Parsing of the `Range` request header.
public enum RangeHeader {
    /// The specs of a `bytes` range set, or nil when the header is not a valid byte range
    /// set: another unit, garbage, `last < first`. RFC 9110 §14.2 lets a server ignore such
    /// a header, and that is what nil means to the origin: answer 200 with the whole body.
    ///
    /// Numbers too large for `Int64` saturate at `Int64.max`; they can then only be clamped
    /// (a last-pos) or be unsatisfiable (a first-pos), never overflow.
    public static func parse(_ value: some StringProtocol) -> [RangeSpec]? {
        let text = value.trimmingSpaces()
        guard let equals = text.firstIndex(of: "="),
            text[..<equals].trimmingSpaces().lowercased() == "bytes"
        else { return nil }
        var specs: [RangeSpec] = []
        for element in text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = element.trimmingSpaces()
            // RFC 9110 §5.6.1.2: recipients accept and ignore empty list elements.
            if trimmed.isEmpty { continue }
            guard let spec = parseSpec(trimmed) else { return nil }
            specs.append(spec)
        }
        return specs.isEmpty ? nil : specs
    }

    private static func parseSpec(_ text: Substring) -> RangeSpec? {
        guard let dash = text.firstIndex(of: "-") else { return nil }
        let firstText = text[..<dash]
        let lastText = text[text.index(after: dash)...]
        if firstText.isEmpty {
            guard let length = saturatingInt(lastText) else { return nil }
            return .suffix(length: length)
        }
        guard let first = saturatingInt(firstText) else { return nil }
        if lastText.isEmpty { return .fromTo(first: first, last: nil) }
        guard let last = saturatingInt(lastText), last >= first else { return nil }
        return .fromTo(first: first, last: last)
    }
}

/// Parses a non-empty run of ASCII digits, saturating at `Int64.max`.
func saturatingInt(_ text: Substring) -> Int64? {
    guard !text.isEmpty else { return nil }
    var value: Int64 = 0
    for byte in text.utf8 {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
        value = overflow1 || overflow2 ? .max : sum
    }
    return value
}
