import AsyncHTTPClient
import NIOHTTP1
import SluiceCore

/// RFC 9530 on the client's side: every request asks for `Repr-Digest` (see `makeRequest`),
/// the answer that describes the file (the probe, a continuation, a whole-file refetch)
/// gives the SHA-256 the finished file must have, and the hash computed anyway for the
/// file (`finish`) is compared with it. No second pass over the file.
extension Download {
    /// The SHA-256 `response` announces in `Repr-Digest`, as lowercase hex; nil when it
    /// announces none, or one that does not parse or is not 32 bytes (ignored: a garbled
    /// field from a remote never fails a download).
    static func announcedSHA256(_ response: HTTPClientResponse) -> String? {
        let values = response.headers["Repr-Digest"]
        guard !values.isEmpty, let digest = ReprDigest.sha256(reprDigest: values.joined(separator: ", ")) else {
            return nil
        }
        return FileDigest.hex(digest)
    }

    /// The failure when the finished file's SHA-256 (`digest`, lowercase hex) is not the
    /// one the remote announced: `checksum_mismatch`, as for a digest the user gave.
    static func announcedDigestMismatch(digest: String, announced: String?) -> SluiceError? {
        guard let announced, announced != digest else { return nil }
        return SluiceError(
            .checksumMismatch, "SHA-256 is \(digest), but the remote's Repr-Digest announced \(announced)"
        )
    }
}

/// CONTRACT.md §8's digest headers: every answer that describes the file is read for the
/// digests it announces (`DigestHeaders`). With a digest expected (given, or from the
/// checksum file), one of the same algorithm that disagrees fails the job at once, naming
/// the header; without one, the strongest becomes the expected digest, checked on the file.
extension Download {
    /// `response` describes the file from byte 0: `wholeBody` when its body is all of it.
    /// `fresh` when it may be another version than an earlier run's (a download from zero):
    /// what that run learnt from headers is dropped first.
    func checkAnnouncedDigests(_ response: HTTPClientResponse, wholeBody: Bool, fresh: Bool) throws {
        if fresh, JobIntegrity.ExpectedSource.isHeader(state.integrity?.source) {
            var finding = state.integrity ?? IntegrityFinding()
            finding.expected = nil
            finding.source = nil
            state.setIntegrity(finding)
        }
        let announced = DigestHeaders.announced({ response.headers[$0] }, wholeBody: wholeBody)
        let expected: Checksum
        if let known = expectedChecksum {
            expected = known
        } else {
            // This answer speaks for the version it serves, digest or none.
            let strongest = announced.max { $0.checksum.algorithm.strength < $1.checksum.algorithm.strength }
            var finding = state.integrity ?? IntegrityFinding()
            finding.expected = strongest?.checksum
            finding.source = strongest?.header
            finding.fromHeaders = true
            state.setIntegrity(finding)
            reporter.yield(.progress(currentProgress()))
            guard let strongest else { return }
            expected = strongest.checksum
        }
        if let disagreeing = announced.first(where: { $0.checksum.algorithm == expected.algorithm && $0.checksum != expected }) {
            throw SluiceError(
                .checksumMismatch,
                "the remote's \(disagreeing.shownHeader) header announces \(expected.algorithm.displayName) \(disagreeing.checksum.hex), expected \(expected.hex)"
            )
        }
    }
}
