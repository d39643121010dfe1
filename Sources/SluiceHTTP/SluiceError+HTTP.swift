public import Foundation
public import HTTPTypes
public import Hummingbird
public import SluiceCore

/// Errors become `{"error":{"code":...,"message":...}}` with a fitting status.
extension SluiceError: ResponseGenerator, HTTPResponseError {
    public var status: HTTPResponse.Status {
        switch code {
        case .invalidJSON, .invalidURL, .unsupportedScheme, .invalidFilename, .invalidField, .forbiddenTarget: .badRequest
        case .unauthorized: .unauthorized
        case .crossOrigin, .insufficientScope: .forbidden
        case .misdirectedRequest: .misdirectedRequest
        case .storeUnavailable, .noSpace: .serviceUnavailable
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .invalidTransition, .dependencyCycle, .remoteChanged, .tokenExists: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .idempotencyKeyReused: .unprocessableContent
        case .unsupportedMediaType: .unsupportedMediaType
        default: .internalServerError
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    /// The error as a response, with extra headers.
    public func response(headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if code == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if code == .insufficientScope { headers[.wwwAuthenticate] = #"Bearer error="insufficient_scope""# }
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: jsonBody)))
    }

    /// The error body as JSON bytes: `{"error":{"code":...,"message":...}}`, with `"field"`
    /// when the error names the field at fault.
    public var jsonBody: Data {
        var error: [(String, JSONValue)] = [("code", .string(code.rawValue)), ("message", .string(message))]
        if let field { error.append(("field", .string(field))) }
        let body = JSONValue.object([("error", .object(error))])
        return Data(body.text.utf8)
    }
}
