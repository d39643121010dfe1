/// Whether a download of an announced size may reserve its space (docs/security.md, "Disk"):
/// only when what it still needs fits in the free space less a floor kept for the job store
/// and other jobs. Pure: the file system's numbers in, a verdict out. Every product of
/// sizes a remote or a file system announces is checked for overflow.
public struct SpaceReservation: Sendable, Equatable {
    /// The file system's size, free space for this user, and the block size, in bytes.
    public struct FileSystem: Sendable, Equatable {
        public var capacity: Int64
        public var available: Int64

        /// From `statvfs`'s block counts; saturates instead of overflowing.
        public init(blockSize: UInt64, totalBlocks: UInt64, availableBlocks: UInt64) {
            capacity = Self.bytes(blockSize, totalBlocks)
            available = Self.bytes(blockSize, availableBlocks)
        }

        public init(capacity: Int64, available: Int64) {
            self.capacity = capacity
            self.available = available
        }

        public static func bytes(_ blockSize: UInt64, _ blocks: UInt64) -> Int64 {
            let (product, overflow) = blockSize.multipliedReportingOverflow(by: blocks)
            return overflow || product > UInt64(Int64.max) ? .max : Int64(product)
        }
    }

    public enum Verdict: Sendable, Equatable {
        /// Reserve the space (`posix_fallocate`).
        case reserve
        /// The file system could never hold it: `file_too_large`.
        case tooLarge(String)
        /// Not now: `no_space`.
        case noSpace(String)
    }

    /// The floor kept free when none is configured: the smaller of 512 MiB and 5 % of the
    /// file system, so that small disks still work.
    public static func defaultFloor(capacity: Int64) -> Int64 {
        min(512 << 20, capacity / 20)
    }

    /// The verdict on reserving `length` bytes for a file that already holds `allocated`
    /// bytes on disk, keeping `floor` (or the default) free.
    public static func verdict(length: Int64, allocated: Int64, on fileSystem: FileSystem, floor: Int64?) -> Verdict {
        guard length <= fileSystem.capacity else {
            return .tooLarge(
                "the file is \(ByteSize.human(length)), more than the whole file system holds (\(ByteSize.human(fileSystem.capacity)))"
            )
        }
        let needed = max(0, length - max(0, allocated))
        let kept = max(0, floor ?? defaultFloor(capacity: fileSystem.capacity))
        let usable = fileSystem.available > kept ? fileSystem.available - kept : 0
        guard needed <= usable else {
            return .noSpace(
                "the file needs \(ByteSize.human(needed)) more; \(ByteSize.human(fileSystem.available)) is free "
                    + "and \(ByteSize.human(kept)) is kept free for the job store and other jobs"
            )
        }
        return .reserve
    }
}
