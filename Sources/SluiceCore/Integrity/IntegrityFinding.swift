/// What a run learnt about what its file must be, before or while fetching it (CONTRACT.md
/// §8): the digest it expects and where that came from, and a signature's check. The job
/// keeps it (`JobSnapshot.integritySpec`), so a later run need not learn it again.
public struct IntegrityFinding: Sendable, Equatable {
    public var expected: Checksum?
    /// `JobIntegrity.ExpectedSource`'s names: where `expected` came from.
    public var source: String?
    public var signature: SignatureCheck?
    /// `expected` and `source` are what the answer describing the file announced (nil:
    /// nothing), replacing whatever an earlier answer's headers gave: the remote's current
    /// version speaks for itself.
    public var fromHeaders = false

    public init(expected: Checksum? = nil, source: String? = nil, signature: SignatureCheck? = nil) {
        self.expected = expected
        self.source = source
        self.signature = signature
    }
}

extension JobSnapshot {
    /// Keeps what a run learnt: the digest (unless the job was given one) and where it came
    /// from, and the signature's check.
    public mutating func learnt(_ finding: IntegrityFinding) {
        let mayReplace = expectedDigest == nil || JobIntegrity.ExpectedSource.isHeader(integrity.expectedSource)
        if finding.fromHeaders {
            // A header's digest is the served version's: a later answer's replaces it, or
            // clears it when that answer announces none.
            if mayReplace {
                expectedChecksum = finding.expected
                integrity.expectedSource = finding.expected == nil ? nil : finding.source
            }
        } else if let expected = finding.expected, mayReplace {
            expectedChecksum = expected
            integrity.expectedSource = finding.source
        }
        if let signature = finding.signature { integrity.signature = signature }
    }
}
