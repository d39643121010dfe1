import Foundation

/// Which proxy a connection goes through, as curl decides it: a job's own `proxy` first;
/// else `--proxy`; else the environment — `https_proxy`/`HTTPS_PROXY` for https URLs,
/// `http_proxy` for http URLs (lower case only: curl ignores `HTTP_PROXY`, which a CGI
/// request can set), `all_proxy`/`ALL_PROXY` for either. `no_proxy`/`NO_PROXY` names the
/// hosts that go direct whatever `--proxy` or the environment say (a job's own proxy is
/// always used): `*` for all, a name for itself and its subdomains (a leading dot is
/// ignored), an IP address, or an address range in CIDR form.
public struct ProxySettings: Sendable, Equatable {
    public var proxy: EndpointURL?
    public var httpProxy: EndpointURL?
    public var httpsProxy: EndpointURL?
    public var allProxy: EndpointURL?
    public var noProxy: [String]

    public init(
        proxy: EndpointURL? = nil, httpProxy: EndpointURL? = nil, httpsProxy: EndpointURL? = nil,
        allProxy: EndpointURL? = nil, noProxy: [String] = []
    ) {
        self.proxy = proxy
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.allProxy = allProxy
        self.noProxy = noProxy
    }

    public static let none = ProxySettings()

    /// The settings `--proxy` and the environment give; a variable that is set but not a
    /// usable proxy URL is an error naming it, so a typo never silently goes direct.
    public static func from(flag: String?, environment: [String: String]) throws -> ProxySettings {
        func variable(_ names: [String]) throws -> EndpointURL? {
            for name in names {
                guard let value = environment[name], !value.isEmpty else { continue }
                // curl takes a bare host:port as http://host:port.
                let text = value.contains("://") ? value : "http://" + value
                return try EndpointURL.proxy(text, field: name)
            }
            return nil
        }
        let noProxy = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        return ProxySettings(
            proxy: try flag.map { try EndpointURL.proxy($0, field: "proxy") },
            httpProxy: try variable(["http_proxy"]),
            httpsProxy: try variable(["https_proxy", "HTTPS_PROXY"]),
            allProxy: try variable(["all_proxy", "ALL_PROXY"]),
            noProxy: noProxy
        )
    }

    /// The proxy for a connection to `host` over `scheme` (`http` or `https`), with a job's
    /// own proxy if it has one; nil to go direct.
    public func proxy(scheme: String, host: String, jobProxy: EndpointURL? = nil) -> EndpointURL? {
        if let jobProxy { return jobProxy }
        guard let chosen = proxy ?? (scheme == "https" ? httpsProxy : httpProxy) ?? allProxy else { return nil }
        return bypasses(host) ? nil : chosen
    }

    /// Whether `no_proxy` sends `host` direct.
    public func bypasses(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        let address = IPAddress(host: name)
        for entry in noProxy {
            if entry == "*" { return true }
            if let address, let range = CIDRRange(entry), range.contains(address) { return true }
            var pattern = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if pattern.hasPrefix("["), pattern.hasSuffix("]") { pattern = String(pattern.dropFirst().dropLast()) }
            if name == pattern || name.hasSuffix("." + pattern) { return true }
        }
        return false
    }
}

/// An address range in CIDR form (`10.0.0.0/8`, `fd00::/8`), or a single address.
struct CIDRRange {
    var network: [UInt8]
    var prefix: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(host: String(first)) else { return nil }
        network = address.bytes
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...(network.count * 8)).contains(prefix) else { return nil }
            self.prefix = prefix
        } else {
            prefix = network.count * 8
        }
    }

    func contains(_ address: IPAddress) -> Bool {
        let bytes = address.bytes
        guard bytes.count == network.count else { return false }
        var remaining = prefix
        for index in bytes.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != network[index] & mask { return false }
            remaining -= bits
        }
        return true
    }
}
