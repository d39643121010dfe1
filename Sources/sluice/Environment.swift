import Foundation

/// Flag values fall back to `SLUICE_*` environment variables, then to defaults.
enum Environment {
    static func string(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func flag(_ name: String) -> Bool {
        guard let value = string(name)?.lowercased() else { return false }
        return ["1", "true", "yes", "on"].contains(value)
    }
}

/// Writes a line to standard output at once, even when it is a pipe.
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
