import ArgumentParser
import Foundation
import SluiceCore
import SluiceSystem

/// The client's and `get`'s variables (`serve`'s are read through `ServeSettings`).
enum Environment {
    static func string(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Writes a line to standard output at once, even when it is a pipe. Whatever it holds of
/// the service's or a remote's text reaches the terminal escaped (`TerminalText`): only its
/// own line breaks and tabs are kept.
func printLine(_ line: String) {
    writeAll(STDOUT_FILENO, TerminalText.safe(line, keeping: lineBreaks) + "\n")
}

/// Writes a line to standard error, escaped as `printLine` escapes.
func printError(_ line: String) {
    writeAll(STDERR_FILENO, TerminalText.safe(line, keeping: lineBreaks) + "\n")
}

/// Writes the service's JSON as it came, but for characters a terminal acts on, which are
/// written as JSON escapes (the same JSON to a reader).
func printJSON(_ data: Data) {
    writeAll(STDOUT_FILENO, TerminalText.safeJSON(String(decoding: data, as: UTF8.self)) + "\n")
}

private let lineBreaks: Set<Unicode.Scalar> = ["\n", "\t"]

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
