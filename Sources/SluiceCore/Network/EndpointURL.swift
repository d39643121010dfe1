import Foundation

/// A URL the service connects to on a user's behalf besides the download itself: a webhook
/// (`http`, `https`) or a proxy (`http`, `socks5`). Checked before anything is stored: a
/// known scheme, a host, at most 2 KiB (docs/security.md, "Input"). Credentials in it
/// (`user:pass@`) are kept for use and shown only as `redacted`.
public struct EndpointURL: Sendable, Equatable {
    public static let maximumBytes = 2048

    /// Lower-cased.
    public var scheme: String
    public var user: String?
    public var password: String?
    /// Without the brackets of an IPv6 literal.
    public var host: String
    public var port: Int
    /// As given.
    public var text: String

    public static let webhookSchemes: Set<String> = ["http", "https"]
    public static let proxySchemes: Set<String> = ["http", "socks5"]

    /// Parses `text`; a URL of another scheme, without a host, over 2 KiB or with spaces or
    /// control characters is `invalid_field` naming `field`.
    public init(_ text: String, schemes: Set<String>, field: String) throws {
        let expected = schemes.sorted().joined(separator: " or ")
        guard text.utf8.count <= Self.maximumBytes else {
            throw SluiceError(.invalidField, "\(field) is longer than 2 KiB", field: field)
        }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }),
            let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            text.dropFirst(scheme.count).hasPrefix("://")
        else {
            throw SluiceError(.invalidField, "\(field) must be an absolute \(expected) URL", field: field)
        }
        guard schemes.contains(scheme) else {
            throw SluiceError(.invalidField, "\(field) must be an \(expected) URL, not \(scheme)", field: field)
        }
        guard var host = components.host, !host.isEmpty else {
            throw SluiceError(.invalidField, "\(field) has no host", field: field)
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // A name of letters, digits, `-` and dots, or an IPv6 literal: `*` or `%41` in a host
        // name was accepted and failed only at the first delivery (found by schemathesis).
        let bracketed = components.percentEncodedHost?.hasPrefix("[") == true
        guard bracketed ? Self.isIPv6Literal(host) : Self.isHostName(components.percentEncodedHost ?? host) else {
            throw SluiceError(.invalidField, "\(field) has an invalid host name", field: field)
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw SluiceError(.invalidField, "\(field) has a port out of range", field: field)
        }
        self.scheme = scheme
        self.user = components.user?.removingPercentEncoding ?? components.user
        self.password = components.password?.removingPercentEncoding ?? components.password
        self.host = host
        self.port = components.port ?? Self.defaultPort(scheme)
        self.text = text
    }

    /// A proxy URL: `http` or `socks5`, and no credentials for SOCKS5 (AsyncHTTPClient's
    /// SOCKS client has no authentication).
    public static func proxy(_ text: String, field: String) throws -> EndpointURL {
        let url = try EndpointURL(text, schemes: proxySchemes, field: field)
        // A proxy is an address: a path (other than `/`), a query or a fragment is a mistake,
        // not something to ignore silently.
        if let components = URLComponents(string: text),
            !(components.path.isEmpty || components.path == "/") || components.query != nil || components.fragment != nil
        {
            throw SluiceError(.invalidField, "\(field) must be scheme://host:port, with no path, query or fragment", field: field)
        }
        guard url.scheme != "socks5" || (url.user == nil && url.password == nil) else {
            throw SluiceError(.invalidField, "\(field): a SOCKS5 proxy with a user name and password is not supported", field: field)
        }
        return url
    }

    /// Labels of ASCII letters, digits and `-`, separated by single dots.
    static func isHostName(_ host: String) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty
                && label.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
        }
    }

    /// What a bracketed IPv6 address holds: hex digits, `:` and the dots of an embedded IPv4
    /// address (no zone: the spec's pattern has none).
    static func isIPv6Literal(_ host: String) -> Bool {
        host.contains(":") && host.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." }
    }

    public static func defaultPort(_ scheme: String) -> Int {
        switch scheme {
        case "https": 443
        case "socks5": 1080
        default: 80
        }
    }

    /// The URL with any credentials replaced by `***`: what job JSON, logs and errors show.
    public var redacted: String { Self.redact(text) }

    /// `text` with the user information of its authority replaced by `***`, whatever the
    /// scheme; the text unchanged when it has none.
    public static func redact(_ text: String) -> String {
        guard let authority = URLCredentials.authority(of: text), let at = authority.at else { return text }
        return String(text[..<authority.start]) + "***" + String(text[at...])
    }

    /// `Basic` credentials from the URL's user information, for `Proxy-Authorization`;
    /// nil when it has none.
    public var basicAuthorization: String? {
        guard let user else { return nil }
        return "Basic " + Data("\(user):\(password ?? "")".utf8).base64EncodedString()
    }

    /// `host:port` as a proxy or a log names it (IPv6 in brackets).
    public var authority: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
