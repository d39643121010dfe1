/// What `statvfs` says about the file system holding an open file.
public struct FileSystemSpace: Equatable, Sendable {
    public var blockSize: UInt64
    public var totalBlocks: UInt64
    /// Blocks free to an unprivileged process.
    public var availableBlocks: UInt64

    /// The file system of an open file (`fstatvfs`); nil with `errno` set when it fails.
    /// The file system holding `path` (`statvfs`); nil with `errno` set when it fails.
    public init?(path: String) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        blockSize = UInt64(info.f_frsize)
        totalBlocks = UInt64(info.f_blocks)
        availableBlocks = UInt64(info.f_bavail)
    }

    public init?(descriptor: Int32) {
        var info = statvfs()
        guard fstatvfs(descriptor, &info) == 0 else { return nil }
        blockSize = UInt64(info.f_frsize)
        totalBlocks = UInt64(info.f_blocks)
        availableBlocks = UInt64(info.f_bavail)
    }
}
