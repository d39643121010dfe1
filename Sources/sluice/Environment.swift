import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The client's and `get`'s variables (`serve`'s are read through `ServeSettings`).
enum Environment {
    static func string(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
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
