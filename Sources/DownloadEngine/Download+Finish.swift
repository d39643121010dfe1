import Foundation
import Logging
import NIOPosix
import SluiceCore
import SluiceSystem

extension Download {
    /// Verifies the complete partial file and moves it into place.
    func finish(file: PartialFile, streamedHash: String?, hasher: PrefixHasher) async throws -> DownloadResult {
        state.setPhase(.verifying)
        // Every byte is on disk: say so now, not after the hash of a large file.
        reporter.yield(.progress(currentProgress()))
        let size = state.bytesDone
        try await Self.sync(file)
        // A checkpoint before the hash, so that a crash during a long hash resumes instead of
        // fetching again; a run shorter than a checkpoint interval has next to nothing to
        // lose, and a small file's whole cost is a few writes: it skips this one.
        if options.clock.elapsed() - createdAt >= .seconds(options.checkpointInterval) {
            await saveCheckpoint(file: file, synced: true)
        }
        let digest: String
        if let streamedHash {
            digest = streamedHash
        } else {
            // Most of the file was hashed while it arrived; this hashes the rest.
            digest = try await hasher.finish(file: file, length: size)
        }
        if let expected = expectedChecksum {
            // Another algorithm than SHA-256 (which the job always reports) costs a second read.
            let actual = expected.algorithm == .sha256 ? digest : try await FileDigests.hex(expected.algorithm, of: file, length: size)
            if case .fail(let mismatch) = RetryMachine.verified(digest: actual, expected: expected) {
                // A digest a header announced is named with its header.
                if options.expectedChecksum == nil, let source = state.integrity?.source, JobIntegrity.ExpectedSource.isHeader(source) {
                    let header = DigestHeaders.Announced(checksum: expected, header: source).shownHeader
                    throw SluiceError(
                        .checksumMismatch,
                        "\(expected.algorithm.displayName) is \(actual), but the remote's \(header) announced \(expected.hex)")
                }
                throw mismatch
            }
        }
        if let mismatch = Self.announcedDigestMismatch(digest: digest, announced: state.remote?.announcedSHA256) {
            throw mismatch
        }
        try await checkFileSignature(file: file, length: size)
        // Last point of return: a pause or delete that came during the hash wins here;
        // after this the file is placed and the run's result is honoured.
        try Task.checkCancellation()
        state.commit()
        let name = target.fileName ?? state.remote?.fileName ?? "download"
        // The intent first, so a crash between placing and saving `completed` is recognised
        // at the next start instead of downloading and placing a second copy.
        let identity = try file.identity()
        var intent = state.checkpoint(url: url) ?? DownloadCheckpoint(url: url)
        intent.placement = .init(device: identity.device, inode: identity.inode, size: size, sha256: digest, fileName: name)
        try await saveWaitingForStore(intent)
        let path = try target.place(name: name)
        // Placed: the download has succeeded whatever happens next. The intent stays until
        // the owner records the result (the job store clears it in the same write that
        // saves `completed`; `sluice get` removes it), so a crash before then is reconciled.
        state.setPhase(.finished)
        reporter.yield(.progress(currentProgress()))
        return DownloadResult(path: path, fileName: (path as NSString).lastPathComponent, sha256: digest, bytes: size)
    }

    /// Saves the placement intent, waiting for a store that does not answer (an outage):
    /// the file is placed once its intent is stored, so a crash never leaves a second copy,
    /// and the download does not fail because its store blinked. A pause or a stop still
    /// ends the wait.
    func saveWaitingForStore(_ intent: DownloadCheckpoint) async throws {
        var waited = false
        while true {
            do {
                try await store.save(intent)
                if waited { logger.notice("the store answers again; placing the file") }
                return
            } catch let error as SluiceError where error.code == .storeUnavailable {
                if !waited { logger.warning("the file is verified; it is placed once the store answers: \(error)") }
                waited = true
                try await options.clock.sleep(.seconds(1))
            }
        }
    }

    /// A previous run that placed its file and died before its job was saved `completed`:
    /// its result, found by the intent it saved, with nothing downloaded again.
    func placedByPreviousRun(_ stored: DownloadCheckpoint?) async throws -> DownloadResult? {
        guard let stored, stored.url == url, let intent = stored.placement,
            let path = FilePlacement.find(intent, at: target.destination, partial: target.partialPath)
        else { return nil }
        state.commit()
        try await store.remove()
        state.setPhase(.finished)
        return DownloadResult(path: path, fileName: (path as NSString).lastPathComponent, sha256: intent.sha256, bytes: intent.size)
    }
}
