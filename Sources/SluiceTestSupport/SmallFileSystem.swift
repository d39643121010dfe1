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

