import SluiceSystem
import DownloadEngine
import Foundation
import Logging
import NIOPosix
import SluiceCore

/// The partial files of one job in a cluster, one name per lease: `ID.e<epoch>.part`.
///
/// A run writes only into the file its own lease names. A node that takes a job over from
/// another node copies the checkpointed bytes into a new file (a new inode) and removes the
/// old name, so a previous owner that is still writing (frozen, then continued, before it
/// learns it lost the job) writes into a file nobody reads, and its rename into
/// `documents/` finds no file to move. A node taking back its own job renames the file: no
/// other process has it open.
enum PartialFileTakeover {
    static func path(cacheDirectory: String, id: String, epoch: Int64) -> String {
        cacheDirectory + "/" + id + ".e" + String(epoch) + ".part"
    }

    /// Every partial file of the job: the single node's `ID.part` and every lease's.
    static func all(cacheDirectory: String, id: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory)) ?? []
        return names.filter { name in
            name == id + ".part" || (name.hasPrefix(id + ".e") && name.hasSuffix(".part") && epoch(of: name, id: id) != nil)
        }.map { cacheDirectory + "/" + $0 }
    }

    static func epoch(of name: String, id: String) -> Int64? {
        guard name.hasPrefix(id + ".e"), name.hasSuffix(".part") else { return nil }
        return Int64(name.dropFirst(id.count + 2).dropLast(5))
    }

    /// Prepares the file of the lease `epoch` from the previous lease's (`epoch - 1`, the run
    /// the checkpoint describes): renamed when `ownFile`, otherwise the `written` ranges
    /// copied into a new file. Files of older leases are removed, and a later lease's (a
    /// newer owner's, when this run is the stale one) are never touched. No previous file
    /// here (another node's disk), or nothing to keep: the run starts from an empty file.
    static func adopt(cacheDirectory: String, id: String, epoch: Int64, ownFile: Bool, written: [Range<Int64>]) throws {
        let target = path(cacheDirectory: cacheDirectory, id: id, epoch: epoch)
        let earlier = all(cacheDirectory: cacheDirectory, id: id).filter { path in
            let name = (path as NSString).lastPathComponent
            return name == id + ".part" || (Self.epoch(of: name, id: id).map { $0 < epoch } ?? false)
        }
        defer { for path in earlier { unlink(path) } }
        let previous = Self.path(cacheDirectory: cacheDirectory, id: id, epoch: epoch - 1)
        guard earlier.contains(previous), access(target, F_OK) != 0 else { return }
        if ownFile {
            guard rename(previous, target) == 0 else {
                throw SluiceError(.io, "cannot take over the partial file of job \(id): \(String(cString: strerror(errno)))")
            }
            return
        }
        guard !written.isEmpty else { return }
        try PartialFileCopy.copy(written, from: previous, to: target)
    }
}

extension PartialFileTakeover {
    /// Prepares a claimed run's partial file from the job's earlier one (`adopt` above), on
    /// the thread pool, and only under a lease the store still honours; the checkpoint says
    /// which ranges to copy. A takeover that fails leaves the run to start over.
    static func adopt(
        id: String, lease: Lease, ownFile: Bool, cluster: any ClusterStore, repository: any JobRepository, cacheDirectory: String,
        logger: Logger
    ) async {
        guard (try? await cluster.heartbeat(running: [lease]))?.isEmpty == true else {
            logger.warning("job \(id): lease \(lease.epoch) not confirmed; its partial file is left alone")
            return
        }
        let checkpoint = ownFile ? nil : (try? await repository.checkpoint(id: id))
        let written = checkpoint?.writtenRanges ?? []
        logger.info(
            "job \(id): lease \(lease.epoch), taking over the partial file \(ownFile ? "by renaming it" : "by copying \(written.count) checkpointed range(s)")"
        )
        do {
            try await NIOThreadPool.singleton.runIfActive {
                try adopt(cacheDirectory: cacheDirectory, id: id, epoch: lease.epoch, ownFile: ownFile, written: written)
            }
        } catch {
            logger.warning("job \(id): the partial file could not be taken over, the download starts over: \(error)")
        }
    }
}
