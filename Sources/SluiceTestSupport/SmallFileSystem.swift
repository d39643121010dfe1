import SluiceSystem
import Foundation

/// A small tmpfs for the data directory, where this machine lets tests mount one.
public enum SmallFileSystem {
    public static func mount(_ path: String, megabytes: Int, remount: Bool = false) -> Bool {
        let options = (remount ? "remount," : "") + "size=\(megabytes)m"
        return run("/bin/mount", remount ? ["-o", options, path] : ["-t", "tmpfs", "-o", options, "tmpfs", path])
    }

    /// A loop-mounted ext4 of `megabytes` at `path`, its image in `image` (a file outside
    /// `path`). ext4, unlike tmpfs, keeps what a failed `posix_fallocate` reserved.
    public static func mountExt4(_ path: String, megabytes: Int, image: String) -> Bool {
        guard FileManager.default.createFile(atPath: image, contents: nil),
            let handle = FileHandle(forWritingAtPath: image)
        else { return false }
        do {
            try handle.truncate(atOffset: UInt64(megabytes) << 20)
            try handle.close()
        } catch { return false }
        return run("/usr/sbin/mkfs.ext4", ["-q", "-F", image]) && run("/bin/mount", ["-o", "loop", image, path])
    }

    private static func run(_ executable: String, _ arguments: [String]) -> Bool {
        guard let child = try? Spawned(executable, arguments) else { return false }
        child.waitUntilExit()
        return child.terminationStatus == 0
    }

    public static func unmount(_ path: String) {
        _ = run("/bin/umount", [path])
    }

    /// Whether mounting works here (root, or a user namespace that allows it).
    public static let available: Bool = {
        let probe = NSTemporaryDirectory() + "sluice-tmpfs-probe-\(getpid())"
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard mount(probe, megabytes: 1) else { return false }
        unmount(probe)
        return true
    }()
}
