import SluiceSystem

/// Copies what a checkpoint vouches for from one partial file into a new one (a new inode),
/// for a run that takes over another run's bytes without sharing its file.
public enum PartialFileCopy {
    /// Copies `ranges` of `source` into `target`: written to `target.tmp`, synced, then
    /// renamed. A source shorter than a range gives what it has (the rest is fetched again).
    /// Nothing is made when `source` does not exist.
    public static func copy(_ ranges: [Range<Int64>], from source: String, to target: String) throws {
        guard access(source, F_OK) == 0 else { return }
        let input = try PartialFile(path: source)
        let temporary = target + ".tmp"
        let output = try PartialFile(path: temporary)
        do {
            try output.truncate()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            for range in ranges {
                var offset = range.lowerBound
                while offset < range.upperBound {
                    let wanted = Int(min(Int64(buffer.count), range.upperBound - offset))
                    let count = try buffer.withUnsafeMutableBytes { try input.read(into: .init(rebasing: $0[..<wanted]), at: offset) }
                    guard count > 0 else { break }
                    try buffer.withUnsafeBytes { try output.write(.init(rebasing: $0[..<count]), at: offset) }
                    offset += Int64(count)
                }
            }
            try output.sync()
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, target) == 0 else {
            unlink(temporary)
            throw PartialFile.error("cannot take over a partial file", path: target, errno: errno)
        }
    }
}
