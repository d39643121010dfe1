/// A web origin, `scheme://host[:port]` (RFC 6454), as a browser's `Origin` header and the
/// `--allowed-origins` list spell it: http or https, a host, an optional port, nothing else.
/// Two spellings of one origin are equal (case, the scheme's default port).
public struct WebOrigin: Hashable, Sendable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int

    /// Nil for anything but an http or https origin without path, query or user.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let name = HostName(authority: parts[1]) else { return nil }
        let scheme = parts[0].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        // `HostName` takes what a `Host` header may hold: no spaces, `?` or `#` either here.
        guard !parts[1].contains(where: { $0 == "?" || $0 == "#" || $0 == " " || $0 == "\\" }) else { return nil }
        self.scheme = scheme
        host = name.host
        port = name.port ?? (scheme == "https" ? 443 : 80)
    }

    public var description: String {
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\(host)" + (port == defaultPort ? "" : ":\(port)")
    }
}
