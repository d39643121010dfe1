extension StringProtocol {
    /// The parts of a path between its `/`s, split at every `/` as the kernel splits a path;
    /// empty parts are kept. (`split(separator: "/")` splits at characters: a `/` that a
    /// combining mark or an emoji modifier follows is part of one character with it, and
    /// was no separator, so a part could hold a `/` that the kernel then walked through.)
    public var pathParts: [String] {
        unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map { part in
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: part)
            return String(scalars)
        }
    }
}

extension String {
    /// What follows `prefix` in this path, compared byte by byte (UTF-8) as the kernel compares
    /// paths, without a copy; nil when the path does not begin with it. (`hasPrefix` and
    /// `dropFirst` work in characters: a `/` that a combining mark follows is one character
    /// with it, so `root + "/"` was no prefix of a path under the root, and spellings that
    /// Unicode deems equivalent but the file system does not compared equal.)
    public func bytesAfter(prefix: String) -> Substring? {
        guard utf8.starts(with: prefix.utf8) else { return nil }
        // Where `prefix`'s last scalar ends here too: a scalar boundary.
        return Substring(unicodeScalars[utf8.index(utf8.startIndex, offsetBy: prefix.utf8.count)...])
    }

    /// Whether the two are the same bytes (`==` on strings is Unicode's equivalence).
    public func isSameBytes(as other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}
