import Foundation
import NIOPosix
import SluiceCore

extension Download {
    /// Verifies the complete partial file and moves it into place.
    func finish(file: PartialFile, streamedHash: String?, hasher: PrefixHasher) async throws -> DownloadResult {
        state.setPhase(.verifying)
        let size = state.bytesDone
        try await Self.sync(file)
        await saveCheckpoint(file: file)
        let digest: String
        if let streamedHash {
            digest = streamedHash
        } else {
            // Most of the file was hashed while it arrived; this hashes the rest.
            digest = try await hasher.finish(file: file, length: size)
        }
        if let expected = options.expectedSHA256, expected != digest {
            throw SluiceError(.checksumMismatch, "SHA-256 is \(digest), expected \(expected)")
        }
        let name = target.fileName ?? state.remote?.fileName ?? "download"
        let path = try FilePlacement.place(target.partialPath, at: target.destination, name: name)
        try await store.remove()
        state.setPhase(.finished)
        onProgress(currentProgress())
        return DownloadResult(path: path, fileName: (path as NSString).lastPathComponent, sha256: digest, bytes: size)
    }
}
