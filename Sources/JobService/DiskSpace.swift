import Foundation
import Logging
import ServiceLifecycle
import SluiceCore
import SluiceSystem

/// The cache's file system on the runner's actor (CONTRACT.md §4, §7 "Disk"): under the floor
/// kept free the queue starts nothing, and the jobs that met a full disk go on by themselves
/// once space comes back (`DiskWatch` decides).
enum DiskSpace {
    /// Looks every second, for the group.
    static func service(for node: JobScheduler) -> any Service {
        let directory = node.configuration.cacheDirectory
        return RepeatingWork(description: "DiskSpaceService", interval: .seconds(1), waitsFirst: false) { [weak node] in
            guard let node, let fileSystem = fileSystem(of: directory) else { return }
            await observe(fileSystem, on: node)
        }
    }

    static func fileSystem(of directory: String) -> SpaceReservation.FileSystem? {
        FileSystemSpace(path: directory)?.bytes
    }

    /// A look now, outside the service's ticks.
    static func lookNow(on node: isolated JobScheduler) {
        if let fileSystem = fileSystem(of: node.configuration.cacheDirectory) { observe(fileSystem, on: node) }
    }

    /// A look at the cache's file system: a change of what it holds back applies at once.
    static func observe(_ fileSystem: SpaceReservation.FileSystem, on node: isolated JobScheduler) {
        node.diskFloor = max(0, node.configuration.minFreeSpace ?? SpaceReservation.defaultFloor(capacity: fileSystem.capacity))
        let floor = node.diskFloor
        let wasLow = node.disk.low
        let (released, changed) = node.disk.observe(available: fileSystem.available, floor: floor)
        guard changed else { return }
        if node.disk.low != wasLow {
            node.logger.notice(
                node.disk.low
                    ? "free space \(ByteSize.human(fileSystem.available)) is under the \(ByteSize.human(floor)) kept free: no job starts"
                    : "free space is back above the \(ByteSize.human(floor)) kept free")
        }
        if !released.isEmpty { node.logger.notice("space came back: \(released.count) job(s) waiting for it go on") }
        node.jobs.stampHolds(node.holds, now: node.configuration.clock.now())
        node.schedule()
    }
}
