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
