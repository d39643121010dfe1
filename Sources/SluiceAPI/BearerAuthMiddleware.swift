import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore

/// With a token set, `/jobs...`, `/events`, `/files/...` and `/metrics` need
/// `Authorization: Bearer TOKEN`; the events routes also take `?access_token=` (browsers'
/// `EventSource` cannot set headers). Everything else — `/healthz`, `/testdata/...`,
/// `/openapi.yaml`, the dashboard's files — stays open so the page can load and ask.
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard Self.isProtected(path) else { return try await next(request, context) }
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer "),
            constantTimeEquals(header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces), token)
        {
            return try await next(request, context)
        }
        if Self.isEventStream(path), let query = request.uri.queryParameters.get("access_token"),
            constantTimeEquals(query, token)
        {
            return try await next(request, context)
        }
        throw SluiceError(.unauthorized, "a valid bearer token is required")
    }

    static func isProtected(_ path: String) -> Bool {
        path == "/jobs" || path.hasPrefix("/jobs/") || path == "/events" || path.hasPrefix("/files/")
            || path == "/files" || path == "/metrics"
    }

    static func isEventStream(_ path: String) -> Bool {
        path == "/events" || (path.hasPrefix("/jobs/") && path.hasSuffix("/events"))
    }
}

/// Compares without an early exit, so the time taken does not tell how much of a guess was right.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let left = Array(a.utf8)
    let right = Array(b.utf8)
    var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
    for index in 0..<max(left.count, right.count) {
        let x = index < left.count ? left[index] : 0
        let y = index < right.count ? right[index] : 0
        difference |= x ^ y
    }
    return difference == 0
}
