/// The `Content-Range` header of a 206 or 416 answer (RFC 9110 §14.4).
public enum ContentRange: Equatable, Sendable {
    /// `bytes first-last/complete`, with `complete == nil` for `*`.
    case range(ByteRange, completeLength: Int64?)
    /// `bytes */complete`, sent with 416.
    case unsatisfied(completeLength: Int64)

    /// Parses the header, rejecting what a client must not recombine (C2): another unit,
    /// `last < first`, or a complete length not greater than `last`.
    public init?(parsing value: some StringProtocol) {
        let text = value.trimmingSpaces()
        guard let space = text.firstIndex(of: " "), text[..<space].lowercased() == "bytes",
            let slash = text.firstIndex(of: "/")
        else { return nil }
        let rangeText = text[text.index(after: space)..<slash].trimmingSpaces()
        let lengthText = text[text.index(after: slash)...].trimmingSpaces()
        if rangeText == "*" {
            guard let complete = strictInt(lengthText) else { return nil }
            self = .unsatisfied(completeLength: complete)
            return
        }
        guard let dash = rangeText.firstIndex(of: "-"),
            let first = strictInt(rangeText[..<dash]),
            let last = strictInt(rangeText[rangeText.index(after: dash)...]),
            last >= first
        else { return nil }
        var complete: Int64?
        if lengthText != "*" {
            guard let length = strictInt(lengthText), length > last else { return nil }
            complete = length
        }
        self = .range(ByteRange(first: first, last: last), completeLength: complete)
    }

    /// The header value.
    public var headerValue: String {
        switch self {
        case .range(let range, let complete):
            return "bytes \(range.first)-\(range.last)/\(complete.map(String.init) ?? "*")"
        case .unsatisfied(let complete):
            return "bytes */\(complete)"
        }
    }
}

/// Digits only, and refusing rather than saturating on overflow: a client must not trust
/// a length it cannot represent.
private func strictInt(_ text: Substring) -> Int64? {
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
        return nil
    }
    return Int64(text)
}
