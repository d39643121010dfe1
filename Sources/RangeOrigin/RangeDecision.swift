import HTTPTypes
import SluiceCore

/// What RFC 9110 says to answer to one GET or HEAD of a representation: preconditions in
/// the order of §13.2.2, then If-Range, then Range. Both ways the origin answers (the
/// Hummingbird route and the event-loop fast path for files) decide here, so they cannot
/// disagree.
enum RangeDecision: Equatable {
    case preconditionFailed
    case notModified
    /// 200 with the whole representation (its length may be unknown).
    case whole
    case unsatisfiable(length: Int64)
    case single(ByteRange, length: Int64)
    case multipart([ByteRange], length: Int64)

    static func decide(
        _ conditional: ConditionalHeaders, rangeHeader: String?, isHead: Bool, representation: Representation
    ) -> RangeDecision {
        switch Preconditions.evaluate(conditional, validators: representation.validators, isGetOrHead: true) {
        case .preconditionFailed:
            return .preconditionFailed
        case .notModified:
            return .notModified
        case .proceed(let honourRange):
            // R9: Range applies to GET only; R22: If-Range without Range is ignored anyway.
            guard let length = representation.length, !isHead, representation.rangesEnabled, honourRange,
                let rangeHeader, let specs = RangeHeader.parse(rangeHeader)
            else {
                return .whole
            }
            switch RangeResolution.resolve(specs, length: length) {
            case .whole: return .whole
            case .unsatisfiable: return .unsatisfiable(length: length)
            case .partial(let ranges) where ranges.count == 1: return .single(ranges[0], length: length)
            case .partial(let ranges): return .multipart(ranges, length: length)
            }
        }
    }

    /// Whether the answer sends the representation's bytes (or, for HEAD, would): 200 or 206.
    var carriesRepresentation: Bool {
        switch self {
        case .whole, .single, .multipart: true
        case .preconditionFailed, .notModified, .unsatisfiable: false
        }
    }

    /// The headers every answer for this representation carries, 200, 206, 304 and 416
    /// alike (R16).
    static func baseHeaders(_ representation: Representation) -> HTTPFields {
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
    /// The conditional headers, list-valued ones joined from repeated fields.
    var conditionalHeaders: ConditionalHeaders {
        func joined(_ name: HTTPField.Name) -> String? {
            let values = self[values: name]
            return values.isEmpty ? nil : values.joined(separator: ",")
        }
        return ConditionalHeaders(
            ifMatch: joined(.ifMatch), ifNoneMatch: joined(.ifNoneMatch),
            ifModifiedSince: self[.ifModifiedSince], ifUnmodifiedSince: self[.ifUnmodifiedSince],
            ifRange: self[.ifRange]
        )
    }

    /// The Range header, or nil when there is none or more than one (then it is ignored).
    var singleRangeHeader: String? {
        let values = self[values: .range]
        return values.count == 1 ? values[0] : nil
    }
}
