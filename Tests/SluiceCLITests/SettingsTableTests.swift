import Configuration
import Foundation
import SluiceServer
import SluiceTestSupport
import Testing

/// `sluice serve`'s settings are defined once (`ServeSettings`): the flags' help, the
/// variables read and docs/settings.md's table come from that one table.
@Suite struct SettingsTableTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The table between the first line starting `| flag |` and the first line after it not
    /// starting with `|`.
    static func documentedTable() throws -> String {
        let text = try String(contentsOf: repository.appending(path: "docs/settings.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("| flag |") }) else { return "" }
        return lines[start...].prefix { $0.hasPrefix("|") }.joined(separator: "\n")
    }

    @Test func docsSettingsTableIsTheCodesTable() throws {
        let documented = try Self.documentedTable()
        #expect(
            documented == ServeSettings.markdownTable,
            "docs/settings.md's table differs from ServeSettings; the table it should hold:\n\(ServeSettings.markdownTable)")
    }

    /// The variable each row names is the one swift-configuration reads for its key.
    @Test func everyDocumentedVariableIsTheOneRead() {
        for setting in ServeSettings.all {
            let reader = ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: [setting.environmentVariable: "x"]))
            #expect(reader.string(forKey: setting.key) == "x", "\(setting.environmentVariable)")
            #expect(setting.environmentVariable.hasPrefix("SLUICE_"))
        }
        #expect(Set(ServeSettings.all.map(\.environmentVariable)).count == ServeSettings.all.count, "a variable named twice")
    }

    /// Every flag `serve --help` shows is in the table with its variable, and every row's flag
    /// is shown: a flag added without a row, or a row without a flag, fails here.
    @Test func theHelpShowsEveryRowAndNothingElse() async throws {
        let run = try ChildProcess(arguments: ["serve", "--help"])
        let (status, help, _) = try await run.finish(timeout: .seconds(10))
        #expect(status == 0)
        let shown = Set(help.matches(of: /--[a-z][a-z0-9-]+/).map { String($0.output) })
            .subtracting(["--help", "--version", "--no-allow-private-networks"])
        let rows = Set(ServeSettings.all.compactMap(\.flag))
        #expect(shown == rows, "in the help only: \(shown.subtracting(rows)); in the table only: \(rows.subtracting(shown))")
        let flat = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for setting in ServeSettings.all where setting.flag != nil {
            #expect(flat.contains(setting.environmentVariable), "\(setting.environmentVariable) not in the help")
        }
    }

    /// A value the table's range refuses is refused before anything starts, naming the flag,
    /// and the variable when it came from the environment.
    @Test func valuesAreCheckedByTheTable() async throws {
        let cases: [([String], [String: String], String)] = [
            (["--max-active", "0"], [:], "--max-active must be between 1 and 64, not 0"),
            ([], ["SLUICE_MAX_ACTIVE": "abc"], "--max-active (SLUICE_MAX_ACTIVE) must be a whole number, not abc"),
            ([], ["SLUICE_LEASE": "2h"], "--lease (SLUICE_LEASE) must be a duration from 1s to 1h (a number with s, m, h or d), not 2h"),
            (["--limit-rate", "0"], [:], "--limit-rate must be a byte count of at least 1"),
            (["--max-connections", "15"], [:], "--max-connections must be between 16"),
            ([], ["SLUICE_ALLOW_PRIVATE_NETWORKS": "maybe"], "SLUICE_ALLOW_PRIVATE_NETWORKS must be 1 or 0"),
        ]
        for (arguments, environment, message) in cases {
            let run = try ChildProcess(
                arguments: ["serve", "--port", "0", "--data", NSTemporaryDirectory() + "unused"] + arguments, environment: environment)
            let (status, _, stderr) = try await run.finish(timeout: .seconds(10))
            #expect(status != 0)
            #expect(stderr.contains(message), "\(arguments) \(environment): \(stderr)")
        }
    }

    /// Help is wrapped once, by the parser, to the terminal's width (80 columns off a
    /// terminal): a line that the next line's first word would have fit on was wrapped in
    /// the source too (`sluice get --help` showed `the` alone on a line).
    @Test func helpIsWrappedOnce() async throws {
        let commands = [["--help"], ["serve", "--help"], ["get", "--help"], ["add", "--help"], ["ls", "--help"], ["wait", "--help"]]
        for command in commands {
            let run = try ChildProcess(arguments: command)
            let (_, help, _) = try await run.finish(timeout: .seconds(10))
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
            for (line, next) in zip(lines, lines.dropFirst()) where !line.isEmpty && !next.isEmpty {
                // A continuation has the indent of the line before it (a paragraph's, or a
                // description's column); a new entry or an option's label does not.
                let indent = next.prefix { $0 == " " }.count
                guard indent == line.prefix(while: { $0 == " " }).count, indent == 0 || indent >= 26 else { continue }
                guard let word = next.split(separator: " ").first else { continue }
                // The parser keeps a line under 80 columns.
                #expect(line.count + 1 + word.count >= 80, "\(command): \"\(line)\" could hold \"\(word)\"")
            }
        }
    }
}
