import Foundation
import SluiceTestSupport
import Testing

/// The README and `docs/` as a maintainer with only the repository reads them (issue 23):
/// every shell block marked `<!-- example: runs -->` runs against a real service and says
/// what it prints, every relative link leads to a page (and a heading), and every page and
/// section the code cites exists. How to mark an example: docs/development.md, "Examples
/// in the docs".
@Suite struct DocsExampleTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The line that marks the shell block after it as one that runs.
    static let marker = "<!-- example: runs -->"

    /// `README.md` and every `docs/*.md`, relative to the repository.
    static var pages: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    static func text(_ page: String) -> String {
        (try? String(contentsOf: repository.appendingPathComponent(page), encoding: .utf8)) ?? ""
    }

    /// One marked block: where it is, its script, and the texts its output must contain.
    struct Example: Sendable, CustomTestStringConvertible {
        let page: String
        let line: Int
        let script: String
        var expected: [String] {
            script.split(separator: "\n").compactMap { line in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return trimmed.hasPrefix("# expect: ") ? String(trimmed.dropFirst("# expect: ".count)) : nil
            }
        }
        var testDescription: String { "\(page):\(line)" }
    }

    /// The marked blocks of every page; a marker not followed by a ```sh block is one with no
    /// script, which the examples test reports.
    static let examples: [Example] = pages.flatMap { page -> [Example] in
        let lines = text(page).components(separatedBy: "\n")
        var found: [Example] = []
        for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces) == marker {
            guard index + 1 < lines.count, lines[index + 1].hasPrefix("```sh"),
                let end = lines[(index + 2)...].firstIndex(where: { $0.hasPrefix("```") })
            else {
                found.append(Example(page: page, line: index + 1, script: ""))
                continue
            }
            found.append(Example(page: page, line: index + 2, script: lines[(index + 2)..<end].joined(separator: "\n")))
        }
        return found
    }

    @Test func theCoreExamplesAreMarked() {
        let pages = Set(Self.examples.map(\.page))
        for page in ["README.md", "docs/api.md", "docs/client.md", "docs/origin.md", "docs/get.md"] {
            #expect(pages.contains(page), "no runnable example in \(page)")
        }
    }

    /// Each marked block with `bash -eo pipefail` in a directory of its own, against a
    /// service of its own (no token, on 127.0.0.1:0), `SLUICE_URL` its address and the built
    /// `sluice` first on `PATH`.
    @Test(arguments: DocsExampleTests.examples) func anExampleRuns(_ example: Example) async throws {
        #expect(!example.script.isEmpty, "\(example.page):\(example.line): the marker is not followed by a ```sh block")
        guard !example.script.isEmpty else { return }
        try await withTemporaryDirectory { directory in
            let work = directory.path + "/work"
            let sluiceDirectory = URL(fileURLWithPath: ChildProcess.sluiceExecutable).deletingLastPathComponent().path
            let path = sluiceDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            try await ChildProcess.serving(data: directory.path + "/data") { url in
                try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
                let run = try ChildProcess(
                    arguments: ["-eo", "pipefail", "-c", example.script], environment: ["SLUICE_URL": url, "PATH": path],
                    directory: work, binary: "/bin/bash"
                )
                let (status, stdout, stderr) = try await run.finish(timeout: .seconds(120))
                let printed = stdout + stderr
                #expect(status == 0, "\(example.page):\(example.line) exited \(status):\n\(printed)")
                for text in example.expected {
                    #expect(printed.contains(text), "\(example.page):\(example.line): no \(text) in:\n\(printed)")
                }
            }
        }
    }

    // MARK: Links and citations

    /// A page's lines outside fenced blocks.
    static func prose(_ page: String) -> [String] {
        var inFence = false
        return text(page).components(separatedBy: "\n").filter { line in
            if line.hasPrefix("```") {
                inFence.toggle()
                return false
            }
            return !inFence
        }
    }

    /// A page's headings, as written (`## A job` → `A job`).
    static func headings(_ page: String) -> [String] {
        prose(page).compactMap { line in
            guard let match = line.wholeMatch(of: #/#+\s+(.+)/#) else { return nil }
            return String(match.1).trimmingCharacters(in: .whitespaces)
        }
    }

    /// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as `-`.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == " " }
                .map { $0 == " " ? "-" : $0 })
    }

    /// `target`, a relative link in `page`, as a path in the repository.
    static func resolve(_ target: String, from page: String) -> String {
        var parts = page.split(separator: "/").dropLast().map(String.init)
        for part in target.split(separator: "/") {
            if part == ".." {
                _ = parts.popLast()
            } else if part != "." {
                parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }

    @Test func relativeLinksLeadToAPageAndAHeading() {
        for page in Self.pages {
            for line in Self.prose(page) {
                // Code spans are not links.
                let plain = line.replacing(#/`[^`]*`/#, with: "")
                for match in plain.matches(of: #/\]\(([^)\s]+)\)/#) {
                    let target = String(match.1)
                    guard !target.contains(":") else { continue }
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    let file = parts[0].isEmpty ? page : Self.resolve(parts[0], from: page)
                    let exists = FileManager.default.fileExists(atPath: Self.repository.appendingPathComponent(file).path)
                    #expect(exists, "\(page): \(target) leads nowhere")
                    if exists, parts.count == 2, file.hasSuffix(".md") {
                        #expect(Self.headings(file).map(Self.anchor).contains(parts[1]), "\(page): \(target) names no heading")
                    }
                }
            }
        }
    }

    /// What the code cites as `docs/<page>.md, "<section>"`: the page exists and has that
    /// heading, so a maintainer can follow the citation.
    @Test func citationsInTheCodeNameAPageAndAHeading() throws {
        let kinds: Set<String> = ["swift", "js", "yaml", "sh", "py", "html", "css"]
        var cited = 0
        for folder in ["Sources", "Tests", "public", "scripts"] {
            let root = Self.repository.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(atPath: root.path) else { continue }
            for case let file as String in files where kinds.contains(URL(fileURLWithPath: file).pathExtension) {
                let source = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                // A citation may break across comment lines.
                let joined = source.replacing(#/\n\s*(?:\/\/\/|\/\/|#|\*)?\s*/#, with: " ")
                for match in joined.matches(of: #/docs\/([\w-]+\.md)((?:,? (?:and )?"[^"]+")*)/#) {
                    cited += 1
                    let page = "docs/" + match.1
                    let headings = Self.headings(page)
                    #expect(!headings.isEmpty, "\(folder)/\(file) cites \(page), which does not exist")
                    for section in match.2.matches(of: #/"([^"]+)"/#).map({ String($0.1) }) {
                        #expect(headings.contains(section), "\(folder)/\(file) cites \(page), \"\(section)\", which has no such heading")
                    }
                }
            }
        }
        #expect(cited > 40)
    }
}
