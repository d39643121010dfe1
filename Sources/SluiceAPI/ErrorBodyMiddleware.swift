import HTTPTypes
import Hummingbird
import Logging
import SluiceCore
import SluiceHTTP

/// Every error leaves as the API's JSON error body:
/// - the router's bare 404, and the static-file server's 400 for a path it will not
///   resolve (`..`, bad escapes), become `not_found`, as they are for `/files/`;
/// - other framework errors keep their status with a JSON body;
/// - anything else is logged and answered 500 `internal_error` with a message that shows
///   nothing of the service (no paths, no SQL), never an empty body.
struct ErrorBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as SluiceError {
            throw error
        } catch let error as HTTPError where error.status == .notFound || error.status == .badRequest {
            throw SluiceError(.notFound, "no route for this path")
        } catch let error as HTTPError {
            var headers = error.headers
            headers[.contentType] = "application/json"
            let body = SluiceError(.init(rawValue: Self.code(for: error.status)), error.body ?? error.status.reasonPhrase)
            return Response(status: error.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.jsonBody)))
        } catch let error as any HTTPResponseError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.error("unexpected error answering \(request.method) \(request.uri.path): \(error)")
            let body = SluiceError(.init(rawValue: "internal_error"), "the service failed to answer this request")
            return Response(
                status: .internalServerError, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.jsonBody))
            )
        }
    }

    private static func code(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 413: "payload_too_large"
        case 415: "unsupported_media_type"
        case 431: "headers_too_large"
        case 400..<500: "bad_request"
        default: "internal_error"
        }
    }
}
