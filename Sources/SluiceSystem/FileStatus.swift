/// What `stat` says about a file, as Swift values. The C struct stays inside this module,
/// which sees no module but the C library: in a module that also sees SwiftNIO's C shims,
/// the compiler can attribute `struct stat`'s members to those shims, and a build with
/// member import visibility then fails or not depending on the order modules were built.
public struct FileStatus: Equatable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// The bytes the file system has allocated to the file (512-byte blocks).
    public var allocatedBlocks: UInt64
    public var modifiedSeconds: Int64
    public var modifiedNanoseconds: Int64
    public var isRegularFile: Bool

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        allocatedBlocks = UInt64(max(0, info.st_blocks))
        #if canImport(Darwin)
        modifiedSeconds = Int64(info.st_mtimespec.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
        #else
        modifiedSeconds = Int64(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
        #endif
        isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
    }

    /// The status of an open file (`fstat`); nil with `errno` set when it fails.
    public init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The status of what `path` leads to, symlinks followed (`stat`); nil with `errno` set
    /// when it fails.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }
}
