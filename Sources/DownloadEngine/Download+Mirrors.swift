import AsyncHTTPClient
import Logging
import NIOHTTP1
import SluiceCore

/// Mirrors with a digest to prove their bytes (CONTRACT.md §8): each is asked for its first
/// byte, and joins only when its answer agrees with the primary's (the same length, and no
/// digest header that disagrees with the one expected); the connections are then spread
/// over the primary and the mirrors that joined, each mirror's requests under its own
/// validator. A mirror that fails is given up on and its connections go to the primary; the
/// finished file is checked against the digest whatever served it.
extension Download {
    /// Sets the lanes for a ranged download of `total` bytes, when the download has mirrors
    /// and a digest; without a digest, mirrors are `MirroredDownload`'s (one at a time).
    func joinMirrors(total: Int64) async {
        let mirrors = options.mirrors + state.linkedMirrors
        guard !mirrors.isEmpty else { return }
        var sources = [SourceState(url: url)] + mirrors.map { SourceState(url: $0) }
        guard let expected = expectedChecksum else {
            state.setSources(sources, lanes: [])
            return
        }
        let answers = await withTaskGroup(of: (Int, Result<DownloadState.Lane, MirrorRefusal>).self) { group in
            for (index, mirror) in mirrors.enumerated() {
                group.addTask { (index + 1, await self.askMirror(mirror, source: index + 1, total: total, expected: expected)) }
            }
            var answers: [(Int, Result<DownloadState.Lane, MirrorRefusal>)] = []
            for await answer in group { answers.append(answer) }
            return answers.sorted { $0.0 < $1.0 }
        }
        var lanes: [DownloadState.Lane] = []
        for (source, answer) in answers {
            switch answer {
            case .success(let lane):
                lanes.append(lane)
            case .failure(let refusal):
                sources[source].failures += 1
                sources[source].state = refusal.excluded ? .excluded : .failed
                logger.notice(
                    "mirror \(URLCredentials.redacted(sources[source].url)) is not used: \(refusal.reason)", metadata: ["url": "\(url)"])
            }
        }
        state.setSources(sources, lanes: lanes)
    }

    /// RFC 6249 §6: the mirrors a `Link: <URL>; rel=duplicate` of the probe's answer names
    /// join only when that answer carries an instance digest (`Digest` or `Repr-Digest`),
    /// which the file is then checked against; up to 16 mirrors in all, none twice.
    func noteLinkedMirrors(_ response: HTTPClientResponse, base: String) {
        let links = response.headers["Link"]
        guard !links.isEmpty else { return }
        let digests = DigestHeaders.announced({ response.headers[$0] }, wholeBody: false)
        guard digests.contains(where: { $0.header == "digest" || $0.header == "repr-digest" }) else {
            logger.info("the answer names mirrors (Link: rel=duplicate) without an instance digest: they are not used")
            return
        }
        var known = Set([url] + options.mirrors)
        var linked: [String] = []
        for mirror in LinkHeader.duplicates(links, base: base) where known.insert(mirror).inserted {
            guard options.mirrors.count + linked.count < 16 else { break }
            linked.append(mirror)
        }
        state.setLinkedMirrors(linked)
    }

    struct MirrorRefusal: Error {
        var reason: String
        /// Refused for its content (`excluded`), not for an error (`failed`).
        var excluded: Bool
    }

    /// Asks `mirror` for its first byte: a lane when it serves the same length and announces
    /// no digest that disagrees with `expected`.
    private func askMirror(_ mirror: String, source: Int, total: Int64, expected: Checksum) async -> Result<
        DownloadState.Lane, MirrorRefusal
    > {
        do {
            let answer = try await askFirstByte(of: mirror)
            guard let identity = answer.identity else {
                return .failure(MirrorRefusal(reason: "it answered \(answer.status) to a request for its first byte", excluded: false))
            }
            guard identity.totalBytes == total else {
                return .failure(
                    MirrorRefusal(
                        reason: "it serves \(identity.totalBytes.map(String.init) ?? "an unknown number of") bytes, not \(total)",
                        excluded: true))
            }
            let announced = DigestHeaders.announced({ answer.headers[$0] }, wholeBody: false)
            if let other = announced.first(where: { $0.checksum.algorithm == expected.algorithm && $0.checksum != expected }) {
                return .failure(MirrorRefusal(reason: "its \(other.shownHeader) announces another digest", excluded: true))
            }
            return .success(DownloadState.Lane(url: answer.finalURL, validators: identity.validators, source: source))
        } catch {
            return .failure(MirrorRefusal(reason: "\(error)", excluded: false))
        }
    }
}
