#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as bytes, parsed the way the system resolver parses a numeric
/// host: `inet_aton` for IPv4 (so `2130706433`, `127.1` and `0x7f.0.0.1` are all
/// 127.0.0.1, as they are to `getaddrinfo` and to every client that connects with it), and
/// `inet_pton` for IPv6 (brackets and a zone id are accepted and the zone ignored).
public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)
    case v6([UInt8])

    /// The host of a URL when it is a numeric address, else nil (a name to resolve).
    public init?(host: some StringProtocol) {
        var text = String(host)
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = String(text.dropFirst().dropLast())
        }
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            self = .v6(withUnsafeBytes(of: &address) { Array($0) })
        } else {
            // inet_aton accepts trailing garbage after a space; a host never has one.
            guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
            var address = in_addr()
            guard inet_aton(text, &address) != 0 else { return nil }
            self = .v4(UInt32(bigEndian: address.s_addr))
        }
    }

    public var description: String {
        switch self {
        case .v4(let value):
            return [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xFF) }.joined(separator: ".")
        case .v6(let bytes):
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes.prefix(16)) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
            let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// The form a URL's host takes: IPv6 in brackets.
    public var urlHost: String {
        if case .v6 = self { return "[\(description)]" }
        return description
    }
}

extension IPAddress {
    /// 127.0.0.0/8, ::1, or an IPv4-mapped loopback address.
    public var isLoopback: Bool {
        switch self {
        case .v4(let value): return value >> 24 == 127
        case .v6(let bytes):
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return bytes[12] == 127 }
            return false
        }
    }
}

extension IPAddress {
    /// The address of 4 bytes or 16 in network order (as a certificate's names hold it).
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self = .v4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16: self = .v6(bytes)
        default: return nil
        }
    }

    /// The address in network order: 4 bytes or 16.
    public var bytes: [UInt8] {
        switch self {
        case .v4(let value): [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
        case .v6(let bytes): bytes
        }
    }
}
