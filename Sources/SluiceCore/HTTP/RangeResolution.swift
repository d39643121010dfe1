/// What a server should send for a `Range` header against a representation of known length.
public enum RangeResolution: Equatable, Sendable {
    /// Ignore the Range header and send the whole representation with 200.
    case whole
    /// No range overlaps the representation: 416 with `Content-Range: bytes */length`.
    case unsatisfiable
    /// 206 with these ranges: one part, or `multipart/byteranges` for several.
    case partial([ByteRange])
}

extension RangeResolution {
    /// The most parts a multipart answer may have; more and the header is ignored.
    public static let maximumParts = 32
    /// A range set longer than this is ignored unread, whatever it asks for.
    public static let maximumSpecs = 256

    /// Resolves a parsed range set against a representation of `length` bytes.
    ///
    /// - Last positions past the end are clamped (RFC 9110 §14.1.2).
    /// - A zero-length representation is always sent whole (R6: the server may ignore Range).
    /// - Overlapping or adjacent ranges are coalesced; a set of more than two ranges with
    ///   overlaps, or more than `maximumParts` parts, is ignored, so a request can never
    ///   make the answer larger than the representation plus part headers (§17.15).
    public static func resolve(_ specs: [RangeSpec], length: Int64) -> RangeResolution {
        guard length > 0, specs.count <= maximumSpecs else { return .whole }
        var ranges: [ByteRange] = []
        for spec in specs {
            switch spec {
            case .fromTo(let first, let last):
                guard first < length else { continue }
                ranges.append(ByteRange(first: first, last: min(last ?? (length - 1), length - 1)))
            case .suffix(let suffixLength):
                guard suffixLength > 0 else { continue }
                ranges.append(ByteRange(first: max(0, length - suffixLength), last: length - 1))
            }
        }
        guard !ranges.isEmpty else { return .unsatisfiable }
        guard ranges.count > 1 else { return .partial(ranges) }

        let sorted = ranges.sorted { $0.first < $1.first }
        var overlaps = false
        var touches = false
        for (previous, next) in zip(sorted, sorted.dropFirst()) {
            if next.first <= previous.last { overlaps = true }
            if next.first <= previous.last + 1 { touches = true }
        }
        if overlaps && ranges.count > 2 { return .whole }
        if touches { ranges = coalesce(sorted) }
        return ranges.count > maximumParts ? .whole : .partial(ranges)
    }

    /// Merges sorted ranges that overlap or touch.
    private static func coalesce(_ sorted: [ByteRange]) -> [ByteRange] {
        var merged: [ByteRange] = []
        for range in sorted {
            if let last = merged.last, range.first <= last.last + 1 {
                merged[merged.count - 1].last = max(last.last, range.last)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
