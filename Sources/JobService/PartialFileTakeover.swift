#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
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
        let newest = previous
        if ownFile {
            guard rename(newest, target) == 0 else {
                throw SluiceError(.io, "cannot take over the partial file of job \(id): \(String(cString: strerror(errno)))")
            }
            return
        }
        guard !written.isEmpty else { return }
        try copy(written, from: newest, to: target)
    }

    /// Copies `ranges` of `source` into a new file at `target`, synced before it is used.
    static func copy(_ ranges: [Range<Int64>], from source: String, to target: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { return }  // gone meanwhile: the run starts over
        defer { close(input) }
        let output = open(target + ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else {
            throw SluiceError(.io, "cannot create a partial file: \(String(cString: strerror(errno)))")
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        do {
            for range in ranges {
                var offset = range.lowerBound
                while offset < range.upperBound {
                    let wanted = Int(min(Int64(buffer.count), range.upperBound - offset))
                    let count = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress, wanted, off_t(offset)) }
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { break }  // shorter than the checkpoint says: the rest is fetched again
                    var done = 0
                    while done < count {
                        let written = buffer.withUnsafeBytes { pwrite(output, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else {
                            throw SluiceError(.io, "cannot copy a partial file: \(String(cString: strerror(errno)))")
                        }
                        done += written
                    }
                    offset += Int64(count)
                }
            }
            guard fsync(output) == 0, close(output) == 0 else {
                throw SluiceError(.io, "cannot sync a partial file: \(String(cString: strerror(errno)))")
            }
        } catch {
            close(output)
            unlink(target + ".tmp")
            throw error
        }
        guard rename(target + ".tmp", target) == 0 else {
            throw SluiceError(.io, "cannot take over a partial file: \(String(cString: strerror(errno)))")
        }
    }
}
