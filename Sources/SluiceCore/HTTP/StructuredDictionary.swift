/// A Structured Field Dictionary (RFC 8941 §3.2), parsed by the algorithm of §4.2 as far
/// as the digest fields of RFC 9530 need it: integers and byte sequences keep their values,
/// every other item (and every parameter) is checked for syntax and then set aside.
///
/// A field that breaks the grammar anywhere is no dictionary at all (nil), as §4.2 says:
/// half of a garbled header from a remote is never taken for an answer.
public struct StructuredDictionary: Sendable, Equatable {
    public enum Item: Sendable, Equatable {
        case integer(Int64)
        case bytes([UInt8])
        /// A decimal, string, token, boolean, date or inner list.
        case other
    }

    /// Members in field order; a key given twice keeps its last value, at its first place.
    public private(set) var members: [(key: String, value: Item)] = []

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.members.elementsEqual(rhs.members) { $0.key == $1.key && $0.value == $1.value }
    }

    /// The value of `key`, nil when the dictionary has no such member.
    public subscript(key: String) -> Item? {
        members.first { $0.key == key }?.value
    }

    /// Parses a field value (several field lines joined with `,`). Spaces and tabs around
    /// the value and around commas are allowed; an empty value is an empty dictionary.
    public init?(parsing text: some StringProtocol) {
        var parser = Parser(Array(text.utf8))
        guard let members = parser.dictionary() else { return nil }
        for (key, value) in members {
            if let index = self.members.firstIndex(where: { $0.key == key }) {
                self.members[index].value = value
            } else {
                self.members.append((key, value))
            }
        }
    }
}

/// RFC 8941 §4.2's parsing algorithms over the field's bytes; each returns nil on failure.
private struct Parser {
    let input: [UInt8]
    var position = 0

    init(_ input: [UInt8]) { self.input = input }

    var next: UInt8? { position < input.count ? input[position] : nil }

    mutating func skip(_ characters: Set<UInt8>) {
        while let byte = next, characters.contains(byte) { position += 1 }
    }

    mutating func consume(_ character: Character) -> Bool {
        guard next == character.asciiValue else { return false }
        position += 1
        return true
    }

    static let space: Set<UInt8> = [0x20]
    static let whitespace: Set<UInt8> = [0x20, 0x09]

    mutating func dictionary() -> [(String, StructuredDictionary.Item)]? {
        var members: [(String, StructuredDictionary.Item)] = []
        skip(Self.whitespace)
        while next != nil {
            guard let key = key() else { return nil }
            var value = StructuredDictionary.Item.other
            if consume("=") {
                if next == UInt8(ascii: "(") {
                    guard innerList() else { return nil }
                } else {
                    guard let item = bareItem() else { return nil }
                    value = item
                }
            }
            guard parameters() else { return nil }
            members.append((key, value))
            skip(Self.whitespace)
            guard next != nil else { break }
            guard consume(",") else { return nil }
            skip(Self.whitespace)
            // A trailing comma is an error (§4.2.2).
            guard next != nil else { return nil }
        }
        return members
    }

    /// `key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`
    mutating func key() -> String? {
        guard let first = next, Self.isLowercase(first) || first == UInt8(ascii: "*") else { return nil }
        let start = position
        while let byte = next, Self.isLowercase(byte) || Self.isDigit(byte) || "_-.*".utf8.contains(byte) {
            position += 1
        }
        return String(decoding: input[start..<position], as: UTF8.self)
    }

    /// `*( ";" *SP param-key [ "=" param-value ] )`, values checked and dropped.
    mutating func parameters() -> Bool {
        while consume(";") {
            skip(Self.space)
            guard key() != nil else { return false }
            if consume("="), bareItem() == nil { return false }
        }
        return true
    }

    /// `"(" *SP [ sf-item *( 1*SP sf-item ) *SP ] ")"`; the list's own parameters follow,
    /// as they do an item's.
    mutating func innerList() -> Bool {
        guard consume("(") else { return false }
        while true {
            skip(Self.space)
            if consume(")") { return true }
            guard bareItem() != nil, parameters() else { return false }
            guard let byte = next, byte == 0x20 || byte == UInt8(ascii: ")") else { return false }
        }
    }

    mutating func bareItem() -> StructuredDictionary.Item? {
        guard let first = next else { return nil }
        switch first {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return number()
        case UInt8(ascii: "\""):
            return string() ? .other : nil
        case UInt8(ascii: ":"):
            return byteSequence().map(StructuredDictionary.Item.bytes)
        case UInt8(ascii: "?"):
            position += 1
            guard let value = next, value == UInt8(ascii: "0") || value == UInt8(ascii: "1") else { return nil }
            position += 1
            return .other
        case UInt8(ascii: "@"):
            // A date (RFC 9651 §3.3.7): an integer of seconds.
            position += 1
            guard case .integer? = number() else { return nil }
            return .other
        case UInt8(ascii: "*"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
            position += 1
            while let byte = next, Self.isTokenCharacter(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/") {
                position += 1
            }
            return .other
        default:
            return nil
        }
    }

    /// An integer (at most 15 digits) or a decimal (at most 12 digits, a dot, 1 to 3 more).
    mutating func number() -> StructuredDictionary.Item? {
        let negative = consume("-")
        var integerDigits: [UInt8] = []
        while let byte = next, Self.isDigit(byte) {
            integerDigits.append(byte)
            position += 1
        }
        guard !integerDigits.isEmpty else { return nil }
        if consume(".") {
            var fractionDigits = 0
            while let byte = next, Self.isDigit(byte) {
                fractionDigits += 1
                position += 1
            }
            guard integerDigits.count <= 12, (1...3).contains(fractionDigits) else { return nil }
            return .other
        }
        guard integerDigits.count <= 15, let magnitude = Int64(String(decoding: integerDigits, as: UTF8.self)) else { return nil }
        return .integer(negative ? -magnitude : magnitude)
    }

    /// `DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE`, printable ASCII only.
    mutating func string() -> Bool {
        guard consume("\"") else { return false }
        while let byte = next {
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard let escaped = next, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else { return false }
                position += 1
            case 0x20...0x7E:
                continue
            default:
                return false
            }
        }
        return false
    }

    /// `":" *(base64) ":"`, decoded.
    mutating func byteSequence() -> [UInt8]? {
        guard consume(":") else { return nil }
        let start = position
        while let byte = next, byte != UInt8(ascii: ":") { position += 1 }
        guard next != nil else { return nil }
        let encoded = input[start..<position]
        position += 1
        return Base64.decode(String(decoding: encoded, as: UTF8.self))
    }

    static func isLowercase(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// `tchar` of RFC 9110 §5.6.2.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
