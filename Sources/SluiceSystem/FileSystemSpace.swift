public import SluiceCore

/// What `statvfs` says about a file system: of an open file, or holding a path.
public struct FileSystemSpace: Equatable, Sendable {
    public var blockSize: UInt64
    public var totalBlocks: UInt64
    /// Blocks free to an unprivileged process.
    public var availableBlocks: UInt64

    /// The file system of an open file (`fstatvfs`); nil with `errno` set when it fails.
    public init?(descriptor: Int32) {
        var info = statvfs()
        guard fstatvfs(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file system holding `path` (`statvfs`); nil with `errno` set when it fails.
    public init?(path: String) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: statvfs) {
        blockSize = UInt64(info.f_frsize)
        totalBlocks = UInt64(info.f_blocks)
        availableBlocks = UInt64(info.f_bavail)
    }

    /// In bytes, as the reservation rule reads it (`SpaceReservation`).
    public var bytes: SpaceReservation.FileSystem {
        SpaceReservation.FileSystem(blockSize: blockSize, totalBlocks: totalBlocks, availableBlocks: availableBlocks)
    }
}
