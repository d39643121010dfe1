/// Base64 with the standard alphabet (RFC 4648 §4), as Structured Fields' byte sequences
/// use it (RFC 8941 §3.3.5). Pure, and small: the digests that travel in headers are 32
/// bytes, so no Foundation `Data` on either side.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The value of each alphabet character, 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// `bytes` encoded, with `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let count = min(3, input.count - index)
            var group = UInt32(input[index]) << 16
            if count > 1 { group |= UInt32(input[index + 1]) << 8 }
            if count > 2 { group |= UInt32(input[index + 2]) }
            for position in 0..<4 {
                let sextet = Int((group >> UInt32(18 - 6 * position)) & 0x3F)
                output.append(position <= count ? alphabet[sextet] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it holds anything but the alphabet and final
    /// padding, or has an impossible length. Missing padding and non-zero pad bits are
    /// accepted, as RFC 8941 §4.2.7 asks of parsers.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var input = Array(text.utf8)
        var padding = 0
        while input.last == UInt8(ascii: "="), padding < 2 {
            input.removeLast()
            padding += 1
        }
        guard input.count % 4 != 1, padding == 0 || (input.count + padding) % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        for character in input {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            group = (group << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
            }
        }
        return output
    }
}
