import HTTPTypes
import SluiceCore

/// `Repr-Digest` (RFC 9530) for a request that asks for it with `Want-Repr-Digest`
/// accepting `sha-256`: the SHA-256 of the whole representation (not of the range a 206
/// carries), on 200 and 206 (single and multipart) answers to GET and HEAD. A request that
/// does not ask costs nothing and gets no field.
extension RangeOrigin {
    /// Generated test data is hashed by generating it, all of it, whatever range was asked
    /// for (about a second per GiB in a release build, ten times that in a debug one):
    /// larger sizes get no digest, so that the tests' and benchmarks' large files cost the
    /// origin nothing extra.
    static let testDataDigestLimit: Int64 = 64 << 20

    /// What determines the bytes of `/testdata`, and so their digest.
    struct TestDataDigestKey: Hashable, Sendable {
        var content: TestDataContent
        var size: Int64
    }

    /// Whether `fields` carry a `Want-Repr-Digest` that accepts SHA-256.
    static func wantsReprDigest(_ fields: HTTPFields) -> Bool {
        let values = fields[values: .wantReprDigest]
        return !values.isEmpty && ReprDigest.acceptsSHA256(want: values.joined(separator: ", "))
    }

    /// The `Repr-Digest` value for `file` when its digest is known; else nil, and its
    /// computation starts (answers after it carry the field).
    func reprDigest(of file: OpenFile) -> String? {
        fileDigests.digest(for: file.identity) { try RepresentationHash.sha256(of: file) }.map { ReprDigest.field(sha256: $0) }
    }

    /// The `Repr-Digest` value for the test data `options` describe, up to
    /// `testDataDigestLimit`, as for files; with `baddigest=1`, a wrong one (its first byte
    /// flipped).
    func reprDigest(ofTestData options: TestDataOptions) -> String? {
        guard options.size <= Self.testDataDigestLimit else { return nil }
        let key = TestDataDigestKey(content: TestDataContent(seed: options.seed), size: options.size)
        guard var digest = testDataDigests.digest(for: key, compute: { RepresentationHash.sha256(of: key.content, size: key.size) })
        else { return nil }
        if options.badDigest { digest[0] ^= 0xFF }
        return ReprDigest.field(sha256: digest)
    }
}

extension HTTPField.Name {
    static let wantReprDigest = HTTPField.Name("Want-Repr-Digest")!
    static let reprDigest = HTTPField.Name("Repr-Digest")!
}
