/// The conditional request headers of one request, as received.
public struct ConditionalHeaders: Sendable {
    public var ifMatch: String?
    public var ifNoneMatch: String?
    public var ifModifiedSince: String?
    public var ifUnmodifiedSince: String?
    public var ifRange: String?

    public init(
        ifMatch: String? = nil, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil,
        ifUnmodifiedSince: String? = nil, ifRange: String? = nil
    ) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifUnmodifiedSince = ifUnmodifiedSince
        self.ifRange = ifRange
    }
}

/// The result of evaluating preconditions, in the order of RFC 9110 §13.2.2.
public enum PreconditionOutcome: Equatable, Sendable {
    /// 412 Precondition Failed.
    case preconditionFailed
    /// 304 Not Modified (GET and HEAD only).
    case notModified
    /// Go on; `honourRange` says whether a `Range` header may be applied (If-Range passed
    /// or was absent).
    case proceed(honourRange: Bool)
}

public enum Preconditions {
    /// Evaluates the conditional headers of a request for a representation that exists and
    /// whose unconditional answer would be 2xx (R24: the caller does not call this for 404s).
    ///
    /// - Parameter isGetOrHead: 304 applies to GET and HEAD only; other methods get 412.
    public static func evaluate(
        _ headers: ConditionalHeaders, validators: Validators, isGetOrHead: Bool
    ) -> PreconditionOutcome {
        // 1. If-Match, strong comparison.
        if let ifMatch = headers.ifMatch {
            guard let condition = EntityTagCondition(parsing: ifMatch),
                condition.matches(validators.etag, strong: true)
            else { return .preconditionFailed }
        } else if let text = headers.ifUnmodifiedSince, let date = HTTPDate.parse(text),
            let lastModified = validators.lastModified
        {
            // 2. If-Unmodified-Since, only without If-Match.
            if lastModified > date { return .preconditionFailed }
        }
        // 3. If-None-Match, weak comparison.
        if let ifNoneMatch = headers.ifNoneMatch {
            if let condition = EntityTagCondition(parsing: ifNoneMatch),
                condition.matches(validators.etag, strong: false)
            {
                return isGetOrHead ? .notModified : .preconditionFailed
            }
        } else if isGetOrHead, let text = headers.ifModifiedSince, let date = HTTPDate.parse(text),
            let lastModified = validators.lastModified
        {
            // 4. If-Modified-Since, only without If-None-Match, only on GET/HEAD.
            if lastModified <= date { return .notModified }
        }
        // 5. If-Range decides whether Range applies.
        guard let ifRange = headers.ifRange else { return .proceed(honourRange: true) }
        return .proceed(honourRange: ifRangeHolds(ifRange, validators: validators))
    }

    /// RFC 9110 §13.1.5: an entity tag must match strongly (a weak tag never does); a date
    /// must equal `Last-Modified` exactly, and only when that date is a strong validator.
    public static func ifRangeHolds(_ value: String, validators: Validators) -> Bool {
        let trimmed = value.trimmingSpaces()
        if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/") {
            guard let tag = EntityTag(parsing: trimmed), let current = validators.etag else { return false }
            return tag.strongMatches(current)
        }
        guard let date = HTTPDate.parse(trimmed), let lastModified = validators.lastModified else {
            return false
        }
        return validators.lastModifiedIsStrong && date == lastModified
    }
}
