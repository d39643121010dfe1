import ArgumentParser
import Foundation

/// curl's `-H 'Name: value'` lines as headers, for `get` and `add`: split at the first
/// colon, both sides trimmed; a later line for the same name (any case) replaces an earlier.
enum HeaderLines {
    static func parse(_ lines: [String], into headers: [String: String] = [:]) throws -> [String: String] {
        var headers = headers
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw ValidationError("-H takes 'Name: value', not \(line)") }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers = headers.filter { $0.key.lowercased() != name.lowercased() }
            headers[name] = value
        }
        return headers
    }
}
