import ArgumentParser
import Foundation

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
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
