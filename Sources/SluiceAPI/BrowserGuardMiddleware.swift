import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceHTTP

/// What a browser on the same machine could be tricked into (docs/security.md, "Browsers"):
/// - DNS rebinding: a page on `attacker.example` whose name now resolves to 127.0.0.1 sends
///   `Host: attacker.example`. When the `Host` must be checked, only loopback names and the
///   `--allowed-hosts` list are answered; anything else gets 421.
/// - CSRF: a page of another site posting to the API. A state-changing request whose
///   `Origin` is not this service's own origin gets 403; on `/jsonrpc`, an origin of the
///   `--allowed-origins` list counts as its own.
struct BrowserGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Nil when any `Host` is answered (a token is set, no list was given).
    let allowedHosts: Set<String>?
    var crossOrigin = CrossOriginPolicy([])

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let host = request.head.authority  // HTTP/1 `Host`, or HTTP/2 `:authority`
        if let refusal = Self.misdirection(host: host, allowedHosts: allowedHosts) {
            throw SluiceError(.misdirectedRequest, refusal)
        }
        if stateChangingMethods.contains(request.method), let origin = request.headers[.origin],
            !Self.isSameOrigin(origin, host: host), !(context.endpointPath == "/jsonrpc" && crossOrigin.allows(origin))
        {
            throw SluiceError(.crossOrigin, "a request from another site's page may not change anything here")
        }
        return try await next(request, context)
    }

    /// Whether `Origin` names the same host and port the request was sent to.
    /// Why a request for `host` is not for this service, or nil when it is (always, with
    /// no host list). Fails closed: a missing or unreadable Host is not an allowed one.
    static func misdirection(host: String?, allowedHosts: Set<String>?) -> String? {
        guard let allowedHosts else { return nil }
        guard let host, let name = HostName(authority: host) else { return "the request names no valid host" }
        guard name.isLoopback || allowedHosts.contains(name.host) else {
            return "this service does not answer for the host \(name.host)"
        }
        return nil
    }

    static func isSameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, let target = HostName(authority: host) else { return false }
        let parts = origin.split(separator: "://", maxSplits: 1)
        guard parts.count == 2, let source = HostName(authority: parts[1]) else { return false }
        let scheme = parts[0].lowercased()
        guard scheme == "http" || scheme == "https" else { return false }
        // A `Host` without a port was sent to the default port of the page's own scheme.
        let defaultPort = scheme == "https" ? 443 : 80
        return source.host == target.host && (source.port ?? defaultPort) == (target.port ?? defaultPort)
    }
}

/// A `Host` header or an origin's authority split into a lowercased host and a port.
struct HostName: Equatable {
    var host: String
    var port: Int?

    init?(authority: some StringProtocol) {
        var text = authority.lowercased()
        // Byte checks, not String.contains(String), which goes through Foundation per call.
        guard !text.isEmpty, !text.utf8.contains(UInt8(ascii: "/")), !text.utf8.contains(UInt8(ascii: "@")) else {
            return nil
        }
        var port: Int?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let value = Int(rest.dropFirst()), (0...65535).contains(value) else { return nil }
                port = value
            } else if !rest.isEmpty {
                return nil
            }
            text = String(text[...close])
        } else if let colon = text.lastIndex(of: ":") {
            guard let value = Int(text[text.index(after: colon)...]), (0...65535).contains(value) else { return nil }
            port = value
            text = String(text[..<colon])
        }
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty else { return nil }
        self.host = text
        self.port = port
    }

    /// `localhost`, a name under `.localhost`, 127.0.0.0/8 or ::1 (RFC 6761 §6.3).
    var isLoopback: Bool {
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        return IPAddress(host: host)?.isLoopback ?? false
    }
}

/// Built once, not per request (a generic type cannot hold stored statics).
private let stateChangingMethods: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]
