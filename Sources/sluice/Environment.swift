import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Flag values fall back to `SLUICE_*` environment variables, then to defaults.
enum Environment {
    static func string(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Set to the empty string, which for a secret is a mistake, not "none".
    static func isSetButEmpty(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment[name] == ""
    }

    /// True or false when set, nil when not; anything else is an error.
    static func optionalFlag(_ name: String) throws -> Bool? {
        guard let value = string(name)?.lowercased() else { return nil }
        if ["1", "true", "yes", "on"].contains(value) { return true }
        if ["0", "false", "no", "off"].contains(value) { return false }
        throw ValidationError("\(name) must be 1 or 0, not \(value)")
    }

    static func flag(_ name: String) -> Bool {
        guard let value = string(name)?.lowercased() else { return false }
        return ["1", "true", "yes", "on"].contains(value)
    }
}

/// Writes a line to standard output at once, even when it is a pipe.
func printLine(_ line: String) {
    writeAll(STDOUT_FILENO, line + "\n")
}

/// Writes a line to standard error.
func printError(_ line: String) {
    writeAll(STDERR_FILENO, line + "\n")
}

/// Writes `text` whole. A reader that has gone (`sluice ls | head`) ends the process as
/// SIGPIPE ends a C tool, quietly: Foundation's `FileHandle.write` traps on EPIPE instead.
func writeAll(_ descriptor: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
        let result = bytes[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if result > 0 {
            sent += result
        } else if result < 0, errno == EINTR {
            continue
        } else {
            if errno == EPIPE {
                signal(SIGPIPE, SIG_DFL)
                raise(SIGPIPE)
            }
            return
        }
    }
}
