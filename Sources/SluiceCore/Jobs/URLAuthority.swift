/// The authority of an absolute URL (RFC 3986 §3.2: `[userinfo@]host[:port]`), checked the
/// way a client that connects will read it: a URL that no client could fetch, or that two
/// parsers could read as different hosts, is refused when it is given (400 `invalid_url`)
/// rather than accepted and failed later. The checks first name the common mistakes; the
/// grammar (`pattern`, also the OpenAPI document's) decides, so that whatever the document
/// calls valid is accepted and nothing else.
public enum URLAuthority {
    /// What is wrong with `authority`, in words for the API's error; nil when nothing is.
    static func problem(_ authority: Substring) -> String? {
        // The userinfo ends at the last `@`, as curl and browsers read it (a user name may be
        // an e-mail address).
        let userinfo = authority.lastIndex(of: "@").map { authority[..<$0] }
        if let userinfo, !validPercentEncoding(userinfo) {
            return "has a % in its user or password that is not followed by two hex digits"
        }
        let hostAndPort = userinfo.map { authority[authority.index(after: $0.endIndex)...] } ?? authority
        let host: Substring
        var port: Substring?
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return "has an IPv6 address without its closing ]" }
            host = hostAndPort[hostAndPort.startIndex...close]
            let after = hostAndPort[hostAndPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return "has characters after its IPv6 address's ]" }
                port = after.dropFirst()
            }
        } else {
            if let colon = hostAndPort.firstIndex(of: ":") {
                host = hostAndPort[..<colon]
                port = hostAndPort[hostAndPort.index(after: colon)...]
            } else {
                host = hostAndPort
            }
            guard !host.isEmpty else { return "has no host" }
            // A percent-encoded host is refused whole: what the target rules judged (`x%40127.0.0.1`,
            // one name) is not what a proxy or a resolver would decode it to (user `x`, host
            // `127.0.0.1`). Nobody needs one: a name is written as it is.
            guard !host.contains("%") else { return "has a % in its host: write the host as it is, not percent-encoded" }
            guard host.unicodeScalars.allSatisfy(isHostCharacter) else { return "has a host with a character a host cannot hold" }
        }
        if let port {
            // Empty is the scheme's default (RFC 3986 §3.2.3); otherwise digits, at most 65535.
            guard port.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), port.utf8.count <= 5,
                port.isEmpty || Int(port)! <= 65535
            else { return "has a port that is not a number from 0 to 65535" }
        }
        // The arbiter, after the checks above have named the common mistakes: the grammar
        // itself, which `public/openapi.yaml` states as the `url` pattern. A plain host (ASCII
        // letters, digits, `-` and `.`, no user information) with the port checked above is
        // one of its reg-names whatever it spells: that common case needs no regular
        // expression (`URLAuthorityTests` checks that the two agree).
        if userinfo == nil, isPlainHost(host) { return nil }
        guard (try? regex.wholeMatch(in: authority)) != nil else {
            return "has a host that is not a name, an IPv4 address or an IPv6 address"
        }
        return nil
    }

    /// RFC 3986's authority as a regular expression (ECMA-262 and Python's `re` read it
    /// the same): `[userinfo@]` with valid percent-encodings; a reg-name (unreserved,
    /// sub-delims, no percent-encoding (issue 35), and any non-ASCII character of an internationalised
    /// name: one negated class, since a class of non-ASCII characters alone is one that
    /// hypothesis, under schemathesis, cannot draw from) or an IPv6 address in brackets, with an RFC 6874 zone (`%25eth0`, plain characters after it); a port from
    /// 0 to 65535, or empty. `URLAuthorityTests` checks that the OpenAPI document's `url`
    /// pattern is made of it.
    public static let pattern =
        #"(?:(?:[^/?#%\x00-\x20\x7F]|%[0-9A-Fa-f]{2})*@)?(?:[^\x00-\x20\x7F#%"/:<>?@\[\\\]^`{|}]+|\[(?:(?:[0-9A-Fa-f]{1,4}:){6}(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})|::(?:[0-9A-Fa-f]{1,4}:){5}(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})|(?:[0-9A-Fa-f]{1,4})?::(?:[0-9A-Fa-f]{1,4}:){4}(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})|(?:(?:[0-9A-Fa-f]{1,4}:){0,1}[0-9A-Fa-f]{1,4})?::(?:[0-9A-Fa-f]{1,4}:){3}(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})|(?:(?:[0-9A-Fa-f]{1,4}:){0,2}[0-9A-Fa-f]{1,4})?::(?:[0-9A-Fa-f]{1,4}:){2}(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})|(?:(?:[0-9A-Fa-f]{1,4}:){0,3}[0-9A-Fa-f]{1,4})?::[0-9A-Fa-f]{1,4}:(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})|(?:(?:[0-9A-Fa-f]{1,4}:){0,4}[0-9A-Fa-f]{1,4})?::(?:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})|(?:(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4})?::[0-9A-Fa-f]{1,4}|(?:(?:[0-9A-Fa-f]{1,4}:){0,6}[0-9A-Fa-f]{1,4})?::)(?:%25[A-Za-z0-9._~-]+)?\])(?::(?:[0-9]{1,4}|[0-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])?)?"#

    /// `pattern`, compiled once, matching code point by code point as the OpenAPI document's
    /// pattern does (not by grapheme).
    nonisolated(unsafe) private static let regex = try! Regex(pattern).matchingSemantics(.unicodeScalar)

    /// ASCII letters, digits, `-` and `.` only, and at least one.
    static func isPlainHost(_ host: Substring) -> Bool {
        !host.isEmpty
            && host.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
    }

    /// Whether `authority` is in the grammar (`pattern`), by the regular expression alone.
    static func matchesGrammar(_ authority: Substring) -> Bool { (try? regex.wholeMatch(in: authority)) != nil }

    /// RFC 3986's reg-name: unreserved, sub-delims and `%` (checked apart); anything past
    /// ASCII is an internationalised name's, left to its resolution.
    private static func isHostCharacter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return true }
        return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-._~!$&'()*+,;=%".unicodeScalars.contains(scalar)
    }

    /// Every `%` is followed by two hex digits.
    private static func validPercentEncoding(_ text: Substring) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return false }
                index += 3
            } else {
                index += 1
            }
        }
        return true
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
