public import SluiceCore

/// The system resolver (`getaddrinfo`), which blocks: call it off the cooperative pool.
public enum SystemResolver {
    /// The IPv4 and IPv6 addresses `host` resolves to for a stream socket; nil when it
    /// does not resolve.
    public static func addresses(of host: String) -> [IPAddress]? {
        var hints = streamHints()
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { return nil }
        defer { freeaddrinfo(list) }
        var result: [IPAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = IPAddress(socketAddress: current.pointee.ai_addr) { result.append(address) }
            entry = current.pointee.ai_next
        }
        return result
    }
}

extension SystemResolver {
    /// `getaddrinfo`'s hints for a stream socket of either family.
    static func streamHints(flags: Int32 = 0) -> addrinfo {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_flags = flags
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        return hints
    }
}

extension IPAddress {
    /// The address of an IPv4 or IPv6 socket address.
    init?(socketAddress: UnsafeMutablePointer<sockaddr>?) {
        guard let socketAddress else { return nil }
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            let value = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            self = .v4(UInt32(bigEndian: value))
        case AF_INET6:
            let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
            }
            self = .v6(bytes)
        default:
            return nil
        }
    }
}
