import Foundation

/// A job URL's user information (`http://user:password@host/…`): shown as `user:***@host`
/// wherever the URL is shown or logged, and sent as `Basic` credentials to the URL's origin,
/// as curl does, instead of in the URL (docs/security.md, "Credentials": they go to that
/// origin only, never to another one a redirect leads to).
public enum URLCredentials {
    /// The URL with its password as `***` (`user:***@host`); unchanged when it has none.
    public static func redacted(_ url: String) -> String {
        guard let parts = userinfo(url) else { return url }
        guard let colon = parts.info.firstIndex(of: ":") else { return url }
        return String(url[..<parts.info.startIndex]) + parts.info[..<colon] + ":***" + String(url[parts.info.endIndex...])
    }

    /// The URL without its user information, and the `Basic` credentials it held
    /// (percent-decoded, as curl sends them); the URL as it is and nil when it holds none.
    public static func split(_ url: String) -> (url: String, authorization: String?) {
        guard let parts = userinfo(url) else { return (url, nil) }
        let plain = String(url[..<parts.info.startIndex]) + String(url[url.index(after: parts.at)...])
        let colon = parts.info.firstIndex(of: ":")
        let user = decoded(parts.info[..<(colon ?? parts.info.endIndex)])
        let password = colon.map { decoded(parts.info[parts.info.index(after: $0)...]) } ?? ""
        return (plain, "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    /// The user information of an absolute URL (before the authority's last `@`), if any.
    private static func userinfo(_ url: String) -> (info: Substring, at: String.Index)? {
        guard let authority = authority(of: url), let at = authority.at else { return nil }
        return (url[authority.start..<at], at)
    }

    /// Where an absolute URL's authority starts (after `://`) and ends (at the first `/`, `?`
    /// or `#`), and its last `@` if it has user information: the one reading of a URL's
    /// authority that its redactions share. Nil without `://`.
    public static func authority(of url: String) -> (start: String.Index, end: String.Index, at: String.Index?)? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let start = schemeEnd.upperBound
        let end = url[start...].firstIndex(where: { "/?#".contains($0) }) ?? url.endIndex
        return (start, end, url[start..<end].lastIndex(of: "@"))
    }

    private static func decoded(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }
}
