/// Which addresses a job may connect to (docs/security.md, "Targets"). A public-only policy
/// refuses loopback, private, link-local (cloud metadata included), CGNAT, unspecified,
/// multicast, reserved and broadcast addresses, and the IPv6 forms that embed one of them.
public struct TargetPolicy: Sendable, Hashable {
    public var allowsPrivateNetworks: Bool
    /// Addresses allowed even when private networks are not: one known internal mirror.
    public var exceptions: Set<IPAddress>

    public init(allowsPrivateNetworks: Bool, exceptions: Set<IPAddress> = []) {
        self.allowsPrivateNetworks = allowsPrivateNetworks
        self.exceptions = exceptions
    }

    /// Everything allowed: local use and tests.
    public static let allowAll = TargetPolicy(allowsPrivateNetworks: true)
    public static let publicOnly = TargetPolicy(allowsPrivateNetworks: false)

    /// Whether a connection to `address` may be made.
    public func allows(_ address: IPAddress) -> Bool {
        allowsPrivateNetworks || address.isGlobal || exceptions.contains(address)
    }

    /// Whether `host` is a name that is loopback by definition (`localhost`, `*.localhost`,
    /// RFC 6761, a trailing dot or any case) and loopback is refused. Such a name is refused
    /// without being resolved: through a proxy the proxy would resolve it to its own host.
    public func refusesLoopbackName(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard name == "localhost" || name.hasSuffix(".localhost"), let loopback = IPAddress(host: "127.0.0.1") else { return false }
        return !allows(loopback)
    }

    /// The error for a refused address, without saying more than the user wrote.
    public static func refusal(host: String) -> SluiceError {
        SluiceError(
            .forbiddenTarget,
            "\(host) is a loopback, private, link-local or otherwise non-public address, which this service may not reach "
                + "(see --allow-private-networks)"
        )
    }
}

extension IPAddress {
    /// Whether the address is globally reachable: not in any of the ranges that
    /// docs/security.md, "Targets", lists, nor reserved.
    public var isGlobal: Bool {
        switch self {
        case .v4(let value): return Self.isGlobalV4(value)
        case .v6(let bytes): return Self.isGlobalV6(bytes)
        }
    }

    private static func isGlobalV4(_ value: UInt32) -> Bool {
        func within(_ base: UInt32, _ prefix: UInt32) -> Bool {
            let mask: UInt32 = prefix == 0 ? 0 : ~0 << (32 - prefix)
            return value & mask == base & mask
        }
        let refused: [(UInt32, UInt32)] = [
            (0x0000_0000, 8),  // 0.0.0.0/8 "this network", unspecified
            (0x0A00_0000, 8),  // 10/8
            (0x6440_0000, 10),  // 100.64/10 CGNAT
            (0x7F00_0000, 8),  // 127/8 loopback
            (0xA9FE_0000, 16),  // 169.254/16 link-local, cloud metadata
            (0xAC10_0000, 12),  // 172.16/12
            (0xC000_0000, 24),  // 192.0.0/24 IETF protocol assignments
            (0xC000_0200, 24),  // 192.0.2/24 documentation
            (0xC058_6300, 24),  // 192.88.99/24 6to4 relay anycast
            (0xC0A8_0000, 16),  // 192.168/16
            (0xC612_0000, 15),  // 198.18/15 benchmarking
            (0xC633_6400, 24),  // 198.51.100/24 documentation
            (0xCB00_7100, 24),  // 203.0.113/24 documentation
            (0xE000_0000, 4),  // 224/4 multicast
            (0xF000_0000, 4),  // 240/4 reserved, broadcast
        ]
        return !refused.contains { within($0.0, $0.1) }
    }

    private static func isGlobalV6(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 16 else { return false }
        func v4(at offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let first10 = bytes[0..<10].allSatisfy { $0 == 0 }
        // ::/96 (unspecified, loopback, IPv4-compatible) and ::ffff:0:0/96 (IPv4-mapped):
        // judged by the IPv4 address inside, so ::ffff:169.254.169.254 is link-local.
        if first10, bytes[10] == 0, bytes[11] == 0 {
            let embedded = v4(at: 12)
            return embedded > 1 && isGlobalV4(embedded)
        }
        if first10, bytes[10] == 0xFF, bytes[11] == 0xFF { return isGlobalV4(v4(at: 12)) }
        // 64:ff9b::/96 NAT64 and 2002::/16 6to4 reach the IPv4 address they carry.
        if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0][...] { return isGlobalV4(v4(at: 12)) }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return isGlobalV4(v4(at: 2)) }
        // 64:ff9b:1::/48 local-use NAT64, and Teredo 2001::/32, whose IPv4 address is hidden.
        if bytes[0..<6] == [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01][...] { return false }
        if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0, bytes[3] == 0 { return false }
        if bytes[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0xC0 { return false }  // fec0::/10 old site-local
        if bytes[0] == 0xFF { return false }  // ff00::/8 multicast
        if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0x0D, bytes[3] == 0xB8 { return false }  // documentation
        return true
    }
}
