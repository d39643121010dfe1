/// What the first source that answered said of the file (CONTRACT.md §8): a later source is
/// used only when it agrees, on the length and on any digest header of an algorithm both
/// announce. Unknown on either side is no disagreement.
public struct SourceAgreement: Sendable, Equatable {
    public var length: Int64?
    /// The digest the first source's headers announced (the strongest), if any.
    public var announced: Checksum?

    public init(length: Int64? = nil, announced: Checksum? = nil) {
        self.length = length
        self.announced = announced
    }

    /// Why a source whose answer gives `length` and announces `digests` is not the same
    /// file; nil when nothing says so.
    public func disagreement(length other: Int64?, announced digests: [DigestHeaders.Announced]) -> String? {
        if let length, let other, length != other {
            return "it serves \(other) bytes, the first source \(length)"
        }
        if let announced,
            let differing = digests.first(where: { $0.checksum.algorithm == announced.algorithm && $0.checksum != announced })
        {
            return "its \(differing.shownHeader) announces another \(announced.algorithm.displayName) than the first source's"
        }
        return nil
    }
}
