import HTTPTypes
import Hummingbird
import NIOCore
import SluiceCore

/// Answers GET and HEAD for one representation with RFC 9110's conditional and range
/// semantics: preconditions in the order of §13.2.2, then If-Range, then Range.
enum RangeResponder {
    static func respond(to request: Request, representation: Representation, source: some ByteSource) -> Response {
        let isHead = request.method == .head
        var headers = baseHeaders(representation)

        switch Preconditions.evaluate(
            request.conditionalHeaders, validators: representation.validators, isGetOrHead: true
        ) {
        case .preconditionFailed:
            return Response(status: .preconditionFailed, headers: headers.withContentLength(0))
        case .notModified:
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        case .proceed(let honourRange):
            guard let length = representation.length else {
                return whole(headers: headers, length: nil, isHead: isHead, source: source)
            }
            // R9: Range applies to GET only; R22: If-Range without Range is ignored anyway.
            guard !isHead, representation.rangesEnabled, honourRange, let rangeValue = request.singleRangeHeader,
                let specs = RangeHeader.parse(rangeValue)
            else {
                return whole(headers: headers, length: length, isHead: isHead, source: source)
            }
            switch RangeResolution.resolve(specs, length: length) {
            case .whole:
                return whole(headers: headers, length: length, isHead: isHead, source: source)
            case .unsatisfiable:
                headers[.contentRange] = ContentRange.unsatisfied(completeLength: length).headerValue
                headers[.contentType] = nil
                return Response(status: .rangeNotSatisfiable, headers: headers.withContentLength(0))
            case .partial(let ranges) where ranges.count == 1:
                let range = ranges[0]
                headers[.contentRange] = ContentRange.range(range, completeLength: length).headerValue
                if range.count <= inlineBodyLimit, let bytes = try? source.bytes(range.first..<(range.last + 1)) {
                    return Response(status: .partialContent, headers: headers, body: ResponseBody(byteBuffer: bytes))
                }
                let body = ResponseBody(contentLength: Int(range.count)) { writer in
                    try await source.write(range.first..<(range.last + 1), to: &writer)
                    try await writer.finish(nil)
                }
                return Response(status: .partialContent, headers: headers.withContentLength(range.count), body: body)
            case .partial(let ranges):
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
                return Response(
                    status: .partialContent, headers: headers.withContentLength(contentLength), body: body
                )
            }
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

    /// The headers every answer for this representation carries, 200, 206, 304 and 416
    /// alike (R16).
    private static func baseHeaders(_ representation: Representation) -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = representation.contentType
        if representation.advertiseRanges {
            headers[.acceptRanges] = representation.rangesEnabled ? "bytes" : "none"
        }
        if let etag = representation.validators.etag { headers[.eTag] = etag.description }
        if let lastModified = representation.validators.lastModified {
            headers[.lastModified] = HTTPDate.format(lastModified)
        }
        if let cacheControl = representation.cacheControl { headers[.cacheControl] = cacheControl }
        return headers
    }
}

extension HTTPFields {
    fileprivate func withContentLength(_ length: Int64) -> HTTPFields {
        var copy = self
        copy[.contentLength] = String(length)
        return copy
    }
}

extension Request {
    /// The conditional headers, list-valued ones joined from repeated fields.
    var conditionalHeaders: ConditionalHeaders {
        func joined(_ name: HTTPField.Name) -> String? {
            let values = headers[values: name]
            return values.isEmpty ? nil : values.joined(separator: ",")
        }
        return ConditionalHeaders(
            ifMatch: joined(.ifMatch), ifNoneMatch: joined(.ifNoneMatch),
            ifModifiedSince: headers[.ifModifiedSince], ifUnmodifiedSince: headers[.ifUnmodifiedSince],
            ifRange: headers[.ifRange]
        )
    }

    /// The Range header, or nil when there is none or more than one (then it is ignored).
    var singleRangeHeader: String? {
        let values = headers[values: .range]
        return values.count == 1 ? values[0] : nil
    }
}
