#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A small tmpfs for the data directory, where this machine lets tests mount one.
public enum SmallFileSystem {
    public static func mount(_ path: String, megabytes: Int, remount: Bool = false) -> Bool {
        let options = (remount ? "remount," : "") + "size=\(megabytes)m"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = remount ? ["-o", options, path] : ["-t", "tmpfs", "-o", options, "tmpfs", path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    public static func unmount(_ path: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = [path]
        try? process.run()
        process.waitUntilExit()
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
