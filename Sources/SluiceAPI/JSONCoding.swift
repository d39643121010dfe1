import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SluiceCore
import SluiceHTTP

/// JSON in and out of the API, with the limits and error codes of docs/api.md, "Errors".
enum JSONCoding {
    static let maximumBodySize = 64 << 10

    /// A JSON response, keys in the order they were built.
    static func response(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: value.text)))
    }

    /// A job as a response.
    static func response(_ job: JobSnapshot, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        response(job.json, status: status, headers: headers)
    }

    /// Jobs as `{"jobs": [...]}`.
    static func response(list jobs: [JobSnapshot], status: HTTPResponse.Status = .ok) -> Response {
        response(.object([("jobs", .array(jobs.map(\.json)))]), status: status)
    }

    /// The request body, whole: 413 `payload_too_large` past `limit` bytes, told by
    /// `Content-Length` before reading when it says so.
    static func body(of request: Request, upTo limit: Int) async throws -> ByteBuffer {
        let tooLarge = SluiceError(.payloadTooLarge, "the body is larger than \(limit >> 10) KiB")
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { throw tooLarge }
        do {
            return try await request.body.collect(upTo: limit)
        } catch {
            throw tooLarge
        }
    }

    /// The request body decoded as `T`: 415 unless it is JSON, 413 past 64 KiB, 400 with
    /// `invalid_json` for malformed JSON; `T`'s own validation errors pass through.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let contentType = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard contentType == "application/json" || contentType?.hasSuffix("+json") == true else {
            throw SluiceError(.unsupportedMediaType, "the body must be JSON (Content-Type: application/json)")
        }
        let buffer = try await body(of: request, upTo: maximumBodySize)
        if let key = JSONDuplicateKeys.first(in: buffer.readableBytesView) {
            throw SluiceError(.invalidJSON, "the key \(String(key.prefix(64)).debugDescription) appears twice in one object")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as SluiceError {
            throw error
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw SluiceError(.invalidJSON, "the body must be a JSON object")
        } catch {
            throw SluiceError(.invalidJSON, "the body is not valid JSON")
        }
    }
}
