import HTTPTypes
import Hummingbird
import NIOCore
import SluiceCore

/// Answers GET and HEAD for one representation as `RangeDecision` decides, as a
/// Hummingbird response.
enum RangeResponder {
    /// - Parameter reprDigest: the `Repr-Digest` value, asked for only when the answer
    ///   carries the representation (200, 206), so a 304 or a 416 never starts a hash.
    static func respond(
        to request: Request, representation: Representation, source: some ByteSource,
        reprDigest: (() -> String?)? = nil
    ) -> Response {
        let isHead = request.method == .head
        var headers = RangeDecision.baseHeaders(representation)
        let decision = RangeDecision.decide(
            request.headers.conditionalHeaders, rangeHeader: request.headers.singleRangeHeader, isHead: isHead,
            representation: representation
        )
        if decision.carriesRepresentation, let reprDigest, let value = reprDigest() {
            headers[.reprDigest] = value
        }
        switch decision {
        case .preconditionFailed:
            return Response(status: .preconditionFailed, headers: headers.withContentLength(0))
        case .notModified:
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        case .whole:
            return whole(headers: headers, length: representation.length, isHead: isHead, source: source)
        case .unsatisfiable(let length):
            headers[.contentRange] = ContentRange.unsatisfied(completeLength: length).headerValue
            headers[.contentType] = nil
            return Response(status: .rangeNotSatisfiable, headers: headers.withContentLength(0))
        case .single(let range, let length):
            headers[.contentRange] = ContentRange.range(range, completeLength: length).headerValue
            if range.count <= inlineBodyLimit, let bytes = try? source.bytes(range.first..<(range.last + 1)) {
                return Response(status: .partialContent, headers: headers, body: ResponseBody(byteBuffer: bytes))
            }
            let body = ResponseBody(contentLength: Int(range.count)) { writer in
                try await source.write(range.first..<(range.last + 1), to: &writer)
                try await writer.finish(nil)
            }
            return Response(status: .partialContent, headers: headers.withContentLength(range.count), body: body)
        case .multipart(let ranges, let length):
            let multipart = MultipartByteranges(
                ranges: ranges, length: length, contentType: representation.contentType,
                boundary: MultipartByteranges.makeBoundary()
            )
            headers[.contentType] = multipart.contentType
            let contentLength = multipart.contentLength
            let body = ResponseBody(contentLength: Int(contentLength)) { writer in
                try await multipart.write(from: source, to: &writer)
                try await writer.finish(nil)
            }
            return Response(status: .partialContent, headers: headers.withContentLength(contentLength), body: body)
        }
    }

    /// A 200 with the whole representation; HEAD gets the same headers and no body.
    private static func whole(headers: HTTPFields, length: Int64?, isHead: Bool, source: some ByteSource) -> Response {
        var headers = headers
        if let length { headers[.contentLength] = String(length) }
        if isHead {
            // A closure body with no length keeps Hummingbird from writing Content-Length: 0.
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(contentLength: length.map(Int.init)) { writer in try await writer.finish(nil) }
            )
        }
        let body = ResponseBody(contentLength: length.map(Int.init)) { writer in
            if let length {
                try await source.write(0..<length, to: &writer)
            } else {
                try await source.writeAll(to: &writer)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}

extension HTTPFields {
    func withContentLength(_ length: Int64) -> HTTPFields {
        var copy = self
        copy[.contentLength] = String(length)
        return copy
    }
}
