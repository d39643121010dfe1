import HTTPTypes
import Hummingbird

/// `X-Content-Type-Options: nosniff` on every response, and a Content-Security-Policy on
/// every response that has none of its own: the dashboard's (its own scripts, styles and
/// API only; no inline code, no framing) for the static files, nothing at all for the API.
/// `/files/` sets `sandbox` itself, so a downloaded HTML page never runs on this origin.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Read before answering: the not-found path records an endpoint of its own.
        let routed = context.endpointPath != nil
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = routed ? apiPolicy : dashboardPolicy
        }
        return response
    }
}

/// The dashboard's policy; built once, not per request (a generic type cannot hold
/// stored statics).
private let dashboardPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
let apiPolicy = "default-src 'none'; frame-ancestors 'none'; sandbox"
