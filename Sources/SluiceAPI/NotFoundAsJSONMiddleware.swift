import Hummingbird
import SluiceCore

/// Unmatched paths answer with the API's JSON error body rather than an empty 404.
struct NotFoundAsJSONMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            throw SluiceError(.notFound, "no route for \(request.uri.path)")
        }
    }
}
