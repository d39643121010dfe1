import SluiceSystem
import Foundation
public import SluiceCore

/// Where a download's checkpoint lives between runs. The engine saves one at least every
/// few seconds and at every stop, always after an `fsync` of the partial file.
public protocol CheckpointStore: Sendable {
    func load() async throws -> DownloadCheckpoint?
    func save(_ checkpoint: DownloadCheckpoint) async throws
    func remove() async throws
}

/// The store refused a checkpoint: another run owns this download now (a cluster node whose
/// lease on the job was taken back). The run stops at once and touches the file no more:
/// no truncation, no placement.
public struct LeaseLost: Error, Sendable {
    public init() {}
}

/// A checkpoint as a JSON file beside the download (aria2's control file): written to a
/// temporary file, `fsync`ed, then renamed over the old one, so a crash leaves either the
/// old checkpoint or the new one, never half of one.
public struct JSONFileCheckpointStore: CheckpointStore {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public func load() async throws -> DownloadCheckpoint? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        // An unreadable checkpoint is treated as none: the download starts over.
        return try? JSONDecoder().decode(DownloadCheckpoint.self, from: data)
    }

    public func save(_ checkpoint: DownloadCheckpoint) async throws {
        let data = try JSONEncoder().encode(checkpoint)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw PartialFile.error("cannot write the checkpoint", path: temporary, errno: errno) }
        defer { close(fd) }
        try data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let result = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                if result < 0 && errno != EINTR { throw PartialFile.error("cannot write the checkpoint", path: temporary, errno: errno) }
                if result > 0 { done += result }
            }
        }
        guard fsync(fd) == 0 else { throw PartialFile.error("cannot sync the checkpoint", path: temporary, errno: errno) }
        guard rename(temporary, path) == 0 else { throw PartialFile.error("cannot save the checkpoint", path: temporary, errno: errno) }
    }

    public func remove() async throws {
        unlink(path)
        unlink(path + ".tmp")
    }
}
