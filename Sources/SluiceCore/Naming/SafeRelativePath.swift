/// A relative path taken from a URL, proven to name something strictly below a root.
///
/// Each segment is percent-decoded once and must then be a plain name: not empty, not `.`
/// or `..`, no `/`, `\` or NUL, and no control character. Double encoding (`%252e`) decodes
/// to a literal `%2e`, which is a harmless name. Symlinks are the file system's business:
/// the origin resolves the joined path and checks it is still under its root.
public struct SafeRelativePath: Hashable, Sendable, CustomStringConvertible {
    public let segments: [String]

    /// Nil when any segment is unsafe or the path is empty.
    public init?(encoded path: some StringProtocol) {
        var segments: [String] = []
        for raw in path.pathParts {
            guard let decoded = PercentDecoding.decode(raw), Self.isPlainName(decoded) else { return nil }
            segments.append(decoded)
        }
        guard !segments.isEmpty else { return nil }
        self.segments = segments
    }

    /// The segments joined with `/`.
    public var description: String { segments.joined(separator: "/") }

    /// Whether `name` can be used as one path component as it is.
    public static func isPlainName(_ name: String) -> Bool {
        guard !name.isEmpty, name != ".", name != ".." else { return false }
        return !name.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F }
    }
}
