import HTTPTypes
import Hummingbird

/// The checks the router's middleware make before a `GET /files/…` reaches the origin
/// (the host check, then the token), for the origin's event-loop fast path, which runs
/// ahead of the router: a request this refuses goes on to the router and is refused there,
/// with the usual error.
struct OriginAdmission: Sendable {
    let allowedHosts: Set<String>?
    let token: TokenDigest?

    /// The host check alone: for routes open without the token (`/healthz`).
    func admitsWithoutToken(_ request: HTTPRequest) -> Bool {
        BrowserGuardMiddleware<SluiceRequestContext>.misdirection(host: request.authority, allowedHosts: allowedHosts) == nil
    }

    func admits(_ request: HTTPRequest) -> Bool {
        if BrowserGuardMiddleware<SluiceRequestContext>.misdirection(host: request.authority, allowedHosts: allowedHosts) != nil {
            return false
        }
        guard let token else { return true }
        guard let header = request.headerFields[.authorization],
            let presented = BearerAuthMiddleware.bearerCredential(header)
        else { return false }
        return token.matches(presented)
    }
}
