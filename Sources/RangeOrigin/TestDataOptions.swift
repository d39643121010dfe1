import SluiceCore

/// The query parameters of `/testdata/SIZE` that shape the answer (docs/origin.md, "Faults").
struct TestDataOptions: Sendable {
    var size: Int64
    var seed: UInt64 = 0
    var rate: Int64?
    var cuts: [Int64] = []
    var noRange = false
    var etag: String?
    var noLength = false
    var status: Int?
    var times = Int.max
    var retryAfter: Int?
    var delayMilliseconds: Int?
    var redirects: Int?
    /// `baddigest=1`: a `Repr-Digest` that is not the content's, for testing clients that check it.
    var badDigest = false
    /// `digest=1`: a `Repr-Digest` of the content (uncorrupted), asked for or not.
    var digest = false
    /// `corrupt=O1,O2`: the byte at each absolute offset is flipped (XOR 0xFF).
    var corrupt: [Int64] = []
    /// `link=URL`, repeatable: `Link: <URL>; rel=duplicate` (RFC 6249), a mirror's address.
    var links: [String] = []
    /// `expires=EPOCH`: from that second on, 403 with an S3-style `AccessDenied` body, as a
    /// presigned URL that expired answers.
    var expires: Int64?

    /// At most this many offsets in `corrupt`, and links in `link`.
    static let maximumListed = 64

    /// Parses the size path component and the query, or throws `invalid_field` naming the
    /// parameter that is wrong.
    init(size sizeText: Substring, query: some Sequence<(key: Substring, value: Substring)>) throws {
        guard let size = ByteSize.parse(sizeText) else {
            throw SluiceError(.invalidField, "size must be a byte count with an optional K, M or G suffix, up to 1T", field: "size")
        }
        self.size = size
        for (key, value) in query {
            func number(_ range: ClosedRange<Int64> = 0...Int64.max) throws -> Int64 {
                guard let number = ByteSize.parse(value, limit: .max), range.contains(number) else {
                    throw SluiceError(
                        .invalidField, "\(key) must be a number in \(range.lowerBound)...\(range.upperBound)", field: String(key))
                }
                return number
            }
            func flag() -> Bool { value == "1" || value == "true" }
            switch key {
            case "seed":
                // Seeds cover the whole UInt64 range (the arithmetic of docs/origin.md,
                // "Generated test data", wraps).
                guard let value = UInt64(value) else {
                    throw SluiceError(.invalidField, "seed must be a whole number in 0...\(UInt64.max)", field: "seed")
                }
                seed = value
            case "rate": rate = try number(1...Int64.max)
            case "cut":
                cuts = try value.split(separator: ",").map { part in
                    guard let offset = ByteSize.parse(part, limit: .max) else {
                        throw SluiceError(.invalidField, "cut must be a list of byte offsets", field: "cut")
                    }
                    return offset
                }
            case "norange": noRange = flag()
            case "nolength": noLength = flag()
            case "baddigest": badDigest = flag()
            case "digest": digest = flag()
            case "corrupt":
                corrupt = try value.split(separator: ",").map { part in
                    guard let offset = ByteSize.parse(part, limit: .max) else {
                        throw SluiceError(.invalidField, "corrupt must be a list of byte offsets", field: "corrupt")
                    }
                    return offset
                }
                guard corrupt.count <= Self.maximumListed else {
                    throw SluiceError(.invalidField, "corrupt: at most \(Self.maximumListed) offsets", field: "corrupt")
                }
            case "link":
                guard links.count < Self.maximumListed, value.utf8.count <= 2048,
                    value.hasPrefix("http://") || value.hasPrefix("https://"),
                    value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "<" && $0 != ">" })
                else {
                    throw SluiceError(
                        .invalidField, "link must be an http or https URL of printable ASCII, at most \(Self.maximumListed) of them",
                        field: "link")
                }
                links.append(String(value))
            case "expires": expires = try number(0...Int64(Int32.max) * 4)
            case "etag":
                guard !value.isEmpty, EntityTag(parsing: "\"\(value)\"") != nil else {
                    throw SluiceError(.invalidField, "etag must be printable ASCII without quotes or spaces", field: "etag")
                }
                etag = String(value)
            case "status": status = Int(try number(200...599))
            case "times": times = Int(try number(0...Int64(Int32.max)))
            case "retry": retryAfter = Int(try number(0...86_400))
            case "delay": delayMilliseconds = Int(try number(0...600_000))
            case "redirect": redirects = Int(try number(0...100))
            default: continue
            }
        }
    }

    var entityTag: EntityTag { EntityTag(etag ?? "td-\(size)-\(seed)") }

    /// Thu, 01 Jan 2026 00:00:00 GMT.
    static let lastModified: Int64 = 1_767_225_600
}
