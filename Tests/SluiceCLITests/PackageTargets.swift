import Foundation

/// The targets `Package.swift` declares and the targets of this package each depends on,
/// read as text: each `.target(`, `.executableTarget(`, `.testTarget(` or `.plugin(` call,
/// its `name:` and the quoted names in its `dependencies: [...]` (products, which name a
/// package, left out).
struct PackageTargets {
    struct Target: Equatable {
        var name: String
        var isTest: Bool
        var dependencies: Set<String>
    }

    var targets: [Target]

    init(manifest: String) {
        let calls = manifest.matches(of: /\.(target|executableTarget|testTarget|plugin)\(/)
        targets = calls.indices.compactMap { index in
            // A call's text runs to the next call (or the end).
            let end = index + 1 < calls.count ? calls[index + 1].range.lowerBound : manifest.endIndex
            let declaration = manifest[calls[index].range.upperBound..<end]
            guard let name = declaration.firstMatch(of: /name: "(\w+)"/)?.output.1 else { return nil }
            let isTest = calls[index].output.1 == "testTarget"
            return Target(name: String(name), isTest: isTest, dependencies: Self.dependencies(in: declaration))
        }
    }

    /// The quoted target names between `dependencies: [` and its closing bracket.
    private static func dependencies(in declaration: Substring) -> Set<String> {
        guard let start = declaration.firstMatch(of: /dependencies: \[/)?.range.upperBound else { return [] }
        var depth = 1
        var end = start
        while end < declaration.endIndex, depth > 0 {
            if declaration[end] == "[" { depth += 1 }
            if declaration[end] == "]" { depth -= 1 }
            end = declaration.index(after: end)
        }
        let list = declaration[start..<end].replacing(/\.product\([^)]*\)/, with: "")
        return Set(list.matches(of: /"(\w+)"/).map { String($0.output.1) })
    }

    var names: Set<String> { Set(targets.map(\.name)) }

    /// The targets of this package that `name` depends on; nil for no such target.
    func dependencies(of name: String) -> Set<String>? {
        targets.first { $0.name == name }?.dependencies
    }
}
