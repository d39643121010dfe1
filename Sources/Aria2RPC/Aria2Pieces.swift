public import SluiceCore

/// aria2's piece view of a download (`numPieces`, `pieceLength`, `bitfield`), made from the
/// job's segment map so that a front end's progress map works: pieces of 1 MiB, doubled
/// until there are at most 4,096 (a bitfield of 1,024 hexadecimal digits at most).
public struct Aria2Pieces: Equatable, Sendable {
    public let length: Int64
    public let count: Int64
    /// One bit per piece, the first piece the high bit of the first digit; set when every
    /// byte of the piece is written.
    public let bitfield: String?

    public static let maximumCount: Int64 = 4096

    public init(total: Int64?, done: [Range<Int64>]) {
        var length: Int64 = 1 << 20
        guard let total, total > 0 else {
            self.length = length
            count = 0
            bitfield = nil
            return
        }
        while (total - 1) / length + 1 > Self.maximumCount { length *= 2 }
        let count = (total - 1) / length + 1
        self.length = length
        self.count = count
        let merged = Self.merge(done)
        var digits = ""
        digits.reserveCapacity(Int((count + 3) / 4))
        var nibble = 0
        for piece in 0..<count {
            let start = piece * length
            let end = min(start + length, total)
            let written = merged.contains { $0.lowerBound <= start && $0.upperBound >= end }
            nibble = nibble << 1 | (written ? 1 : 0)
            if piece % 4 == 3 {
                digits.append(Self.hex[nibble])
                nibble = 0
            }
        }
        let rest = Int(count % 4)
        if rest != 0 { digits.append(Self.hex[nibble << (4 - rest)]) }
        // aria2 pads the bitfield to whole bytes.
        if digits.count % 2 == 1 { digits.append("0") }
        bitfield = digits
    }

    /// The byte ranges a segment map has written.
    public static func written(_ segments: [JobSegment]) -> [Range<Int64>] {
        segments.compactMap { segment in
            let end = min(segment.end, segment.start + max(0, segment.done))
            return end > segment.start ? segment.start..<end : nil
        }
    }

    private static let hex = Array("0123456789abcdef")

    private static func merge(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        var merged: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
