import Foundation
import Testing

/// The modules depend on each other as docs/development.md's "Layout" says, and only so
/// (issue 37): the table's "may import" column is each target's list in `Package.swift`,
/// the edges the layout forbids stay out, and no file imports a module of ours its target
/// does not list (SwiftPM would let it: a module a dependency builds is on the search path).
@Suite struct PackageEdgesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func package() throws -> PackageTargets {
        PackageTargets(manifest: try String(contentsOf: repository.appending(path: "Package.swift"), encoding: .utf8))
    }

    /// The Layout table's rows: the module of the first column, and the modules named in
    /// backticks in the "may import" column.
    static func documentedLayout() throws -> [String: Set<String>] {
        let text = try String(contentsOf: repository.appending(path: "docs/development.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("| module | role | may import |") }) else { return [:] }
        var rows: [String: Set<String>] = [:]
        for line in lines[(start + 2)...].prefix(while: { $0.hasPrefix("|") }) {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, let module = cells[1].firstMatch(of: /`(\w+)`/)?.output.1 else { continue }
            rows[String(module)] = Set(cells[3].matches(of: /`(\w+)`/).map { String($0.output.1) })
        }
        return rows
    }

    @Test func theAPIAndTheStoresDoNotDependOnTheEngine() throws {
        let package = try Self.package()
        let api = try #require(package.dependencies(of: "SluiceAPI"))
        #expect(api.isDisjoint(with: ["DownloadEngine", "JobStore", "PostgresStore"]), "SluiceAPI depends on \(api.sorted())")
        for store in ["JobStore", "PostgresStore"] {
            let dependencies = try #require(package.dependencies(of: store))
            #expect(!dependencies.contains("DownloadEngine"), "\(store) depends on DownloadEngine")
        }
        #expect(package.dependencies(of: "SluiceCore") == [], "SluiceCore is pure: it depends on no module of ours")
    }

    @Test func theLayoutTableIsThePackagesDependencies() throws {
        let package = try Self.package()
        let documented = try Self.documentedLayout()
        let modules = Set(package.targets.filter { !$0.isTest }.map(\.name))
        #expect(
            Set(documented.keys) == modules,
            "in the table only: \(Set(documented.keys).subtracting(modules).sorted()); in Package.swift only: \(modules.subtracting(documented.keys).sorted())"
        )
        for target in package.targets where !target.isTest {
            guard let mayImport = documented[target.name] else { continue }
            #expect(
                mayImport == target.dependencies,
                "\(target.name): the table says \(mayImport.sorted()), Package.swift \(target.dependencies.sorted())")
        }
    }

    /// Every file of a target imports only the modules of ours the target lists.
    @Test func filesImportOnlyWhatTheirTargetLists() throws {
        let package = try Self.package()
        for target in package.targets {
            let folder = Self.repository.appending(path: target.isTest ? "Tests" : "Sources").appending(path: target.name)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appending(path: file), encoding: .utf8)
                let imported = Set(
                    text.matches(of: /(?m)^(?:@\w+ )*(?:public |package |internal )?import (\w+)/).map { String($0.output.1) })
                let undeclared = imported.intersection(package.names).subtracting(target.dependencies)
                #expect(undeclared.isEmpty, "\(target.name)/\(file) imports \(undeclared.sorted()), which its target does not list")
            }
        }
    }

    /// The reading sees the edges issue 37 removed: the old manifest's PostgresStore and
    /// SluiceAPI, as they were declared.
    @Test func theOldEdgesAreSeen() {
        let old = PackageTargets(
            manifest: """
                .target(
                    name: "PostgresStore",
                    dependencies: [
                        "SluiceCore",
                        "JobService",
                        "DownloadEngine",
                        .product(name: "PostgresNIO", package: "postgres-nio"),
                    ],
                    swiftSettings: swiftSettings
                ),
                .target(name: "SluiceAPI", dependencies: ["SluiceCore", "DownloadEngine", .product(name: "NIOCore", package: "swift-nio")]),
                """)
        #expect(old.dependencies(of: "PostgresStore") == ["SluiceCore", "JobService", "DownloadEngine"])
        #expect(old.dependencies(of: "SluiceAPI") == ["SluiceCore", "DownloadEngine"])
    }
}
