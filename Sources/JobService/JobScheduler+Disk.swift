import Foundation
import Logging
public import ServiceLifecycle
import SluiceCore
import SluiceSystem

extension JobScheduler {
    /// Looks at the cache's file system every second (CONTRACT.md §4, §7 "Disk"): under the
    /// floor kept free the queue starts nothing, and the jobs that met a full disk go on by
    /// themselves once space comes back (`DiskWatch`).
    public nonisolated var diskSpaceService: any Service {
        let directory = configuration.cacheDirectory
        return RepeatingWork(description: "DiskSpaceService", interval: .seconds(1), waitsFirst: false) { [weak self] in
            guard let self, let fileSystem = JobScheduler.fileSystem(of: directory) else { return }
            await self.observeDisk(fileSystem)
        }
    }

    static func fileSystem(of directory: String) -> SpaceReservation.FileSystem? {
        FileSystemSpace(path: directory).map {
            SpaceReservation.FileSystem(blockSize: $0.blockSize, totalBlocks: $0.totalBlocks, availableBlocks: $0.availableBlocks)
        }
    }

    /// A look at the cache's file system now, outside the service's ticks.
    func lookAtDisk() {
        if let fileSystem = Self.fileSystem(of: configuration.cacheDirectory) { observeDisk(fileSystem) }
    }

    /// A look at the cache's file system: a change of what it holds back applies at once.
    func observeDisk(_ fileSystem: SpaceReservation.FileSystem) {
        diskFloor = max(0, configuration.minFreeSpace ?? SpaceReservation.defaultFloor(capacity: fileSystem.capacity))
        let wasLow = disk.low
        let (released, changed) = disk.observe(available: fileSystem.available, floor: diskFloor)
        guard changed else { return }
        if disk.low != wasLow {
            logger.notice(
                disk.low
                    ? "free space \(ByteSize.human(fileSystem.available)) is under the \(ByteSize.human(diskFloor)) kept free: no job starts"
                    : "free space is back above the \(ByteSize.human(diskFloor)) kept free")
        }
        if !released.isEmpty { logger.notice("space came back: \(released.count) job(s) waiting for it go on") }
        jobs.stampHolds(holds, now: configuration.clock.now())
        schedule()
    }
}
