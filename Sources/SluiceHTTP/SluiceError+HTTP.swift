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
        case .crossOrigin: .forbidden
        case .misdirectedRequest: .misdirectedRequest
        case .storeUnavailable, .noSpace: .serviceUnavailable
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .invalidTransition: .conflict
        case .payloadTooLarge: .contentTooLarge
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
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: jsonBody)))
    }

    /// The error body as JSON bytes: `{"error":{"code":...,"message":...}}`.
    public var jsonBody: Data {
        let body = JSONValue.object([("error", .object([("code", .string(code.rawValue)), ("message", .string(message))]))])
        return Data(body.text.utf8)
    }
}
