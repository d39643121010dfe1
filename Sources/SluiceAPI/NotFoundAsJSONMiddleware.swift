import Hummingbird
import SluiceCore

/// Unmatched paths answer with the API's JSON error body: the router's bare 404, and the
/// static-file server's 400 for a path it will not resolve (`..`, bad escapes), which is a
/// 404 as it is for `/files/`.
struct NotFoundAsJSONMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .badRequest {
            throw SluiceError(.notFound, "no route for \(request.uri.path)")
        }
    }
}
