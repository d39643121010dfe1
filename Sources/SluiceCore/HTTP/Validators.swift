/// What identifies one version of a representation: its entity tag and modification date.
public struct Validators: Hashable, Sendable, Codable {
    public var etag: EntityTag?
    /// Seconds since 1970, as sent in `Last-Modified`.
    public var lastModified: Int64?
    /// Whether `lastModified` may serve as a strong validator (RFC 9110 §8.8.2.2): the file
    /// was not modified within the second it is being served.
    public var lastModifiedIsStrong: Bool

    public init(etag: EntityTag? = nil, lastModified: Int64? = nil, lastModifiedIsStrong: Bool = true) {
        self.etag = etag
        self.lastModified = lastModified
        self.lastModifiedIsStrong = lastModifiedIsStrong
    }

    /// The `If-Range` value a client should send to resume under these validators
    /// (RFC 9110 §13.1.5, C4): the strong ETag, else the Last-Modified date when it is
    /// strong (a weak ETag is never sent, and does not keep a strong date from being used);
    /// nil when neither is usable.
    public var ifRangeValue: String? {
        if let etag, !etag.isWeak { return etag.description }
        if let lastModified, lastModifiedIsStrong { return HTTPDate.format(lastModified) }
        return nil
    }

    /// Whether a later response's validators say it is the same representation: every
    /// validator the first response had must be there again, unchanged (a missing one is a
    /// change, RFC 9110 §13.1.5's "same validators"). One that only the later response has
    /// tells nothing about the bytes already on disk, and is ignored.
    public func sameRepresentation(etag otherTag: EntityTag?, lastModified otherDate: Int64?) -> Bool {
        if let lastModified, otherDate != lastModified { return false }
        if let etag {
            guard let otherTag, otherTag.isWeak == etag.isWeak, otherTag.opaque == etag.opaque else { return false }
        }
        return true
    }

    // MARK: Codable, for checkpoints

    private enum CodingKeys: String, CodingKey { case etag, lastModified, lastModifiedIsStrong }

    /// A checkpoint written before the strength was stored does not vouch for its date.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.etag = try container.decodeIfPresent(String.self, forKey: .etag).flatMap { EntityTag(parsing: $0) }
        self.lastModified = try container.decodeIfPresent(Int64.self, forKey: .lastModified)
        self.lastModifiedIsStrong = try container.decodeIfPresent(Bool.self, forKey: .lastModifiedIsStrong) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(etag?.description, forKey: .etag)
        try container.encodeIfPresent(lastModified, forKey: .lastModified)
        try container.encode(lastModifiedIsStrong, forKey: .lastModifiedIsStrong)
    }
}
