/// Percent-decoding of URL path segments (RFC 3986 §2.1).
public enum PercentDecoding {
    /// The decoded bytes as UTF-8 text, or nil for a malformed escape or invalid UTF-8.
    public static func decode(_ text: some StringProtocol) -> String? {
        decodeBytes(text).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The decoded bytes, or nil for a malformed escape.
    public static func decodeBytes(_ text: some StringProtocol) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
