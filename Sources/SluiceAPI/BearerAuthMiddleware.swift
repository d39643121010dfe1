import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceHTTP

/// Deny by default: with a token set, a request reaches a route's handler only with
/// `Authorization: Bearer TOKEN` — the service's token, or a named token whose scope covers
/// the request (`RouteScope`: 403 `insufficient_scope` otherwise) — unless the route it was
/// routed to is on the short list of open ones (`/healthz`, `/openapi.yaml`, and `/jsonrpc`,
/// whose calls carry their token). The decision uses the route the router chose
/// (`context.endpointPath`), never the spelling of the path, so `//jobs`, `/jobs/` and any
/// route added later are guarded like `/jobs`. Requests that match no route fall through to
/// the dashboard's static files, which must load for the page to ask for the token.
/// The events routes also take `?access_token=`: browsers' `EventSource` cannot set headers.
struct BearerAuthMiddleware: RouterMiddleware {
    typealias Context = SluiceRequestContext
    let tokens: TokenRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // No route: the static-file fallback for the dashboard, which holds nothing secret.
        guard let route = context.endpointPath, !openRoutes.contains(route) else {
            return try await next(request, context)
        }
        var scope: TokenScope?
        var presented: Substring?
        if let header = request.headers[.authorization], let credential = Self.bearerCredential(header) {
            scope = await Self.scope(of: credential, in: tokens)
            presented = credential
        }
        if scope == nil, eventRoutes.contains(route), let query = request.uri.queryParameters.get("access_token") {
            scope = await Self.scope(of: Substring(query), in: tokens)
            presented = Substring(query)
        }
        guard let scope, let presented else {
            throw SluiceError(
                .unauthorized, "a valid token is required: send the header Authorization: Bearer TOKEN (sluice's client reads SLUICE_TOKEN)"
            )
        }
        var context = context
        if !tokens.isMaster(presented) { context.namedToken = TokenDigest.hex(presented) }
        let needed = RouteScope.required(method: request.method.rawValue, route: route)
        guard scope.allows(needed) else {
            throw SluiceError(
                .insufficientScope, "this token's scope is \(scope.rawValue); \(request.method.rawValue) \(route) needs \(needed.rawValue)"
            )
        }
        return try await next(request, context)
    }

    /// The service's own token is checked here, without a hop to the registry's actor: it is
    /// the common case, on every request.
    static func scope(of presented: Substring, in tokens: TokenRegistry) async -> TokenScope? {
        tokens.isMaster(presented) ? .admin : await tokens.scope(of: presented)
    }

    /// The credential of `Bearer CREDENTIAL`; the scheme name is case-insensitive (RFC 9110 §11.1).
    static func bearerCredential(_ header: String) -> Substring? {
        let trimmed = header.drop { $0 == " " || $0 == "\t" }
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        return trimmed.dropFirst(7).drop { $0 == " " }.prefix { $0 != " " && $0 != "\t" }
    }
}

/// The service's token, kept as a SHA-256 digest so that every comparison is between two
/// 32-byte values in constant time: neither the length nor the content of a guess shows in
/// the time it takes.
public struct TokenDigest: Sendable {
    private let digest: [UInt8]

    /// Nil for an empty token, which would let anyone in.
    public init?(_ token: String) {
        guard !token.isEmpty else { return nil }
        digest = Array(SHA256.hash(data: Data(token.utf8)))
    }

    public func matches(_ candidate: some StringProtocol) -> Bool {
        let other = Array(SHA256.hash(data: Data(candidate.utf8)))
        var difference: UInt8 = 0
        for index in 0..<digest.count {
            difference |= digest[index] ^ other[index]
        }
        return difference == 0
    }
}

// Built once: a generic type cannot hold stored statics, and a computed one would build
// the set again on every request.

/// Routes anyone may call. `/jsonrpc` checks the token each call carries (aria2's
/// `token:SECRET` parameter): aria2's clients send no `Authorization` header.
private let openRoutes: Set<String> = ["/healthz", "/openapi.yaml", "/jsonrpc"]
/// Routes that also accept the token as `?access_token=`.
private let eventRoutes: Set<String> = ["/events", "/jobs/{id}/events"]
