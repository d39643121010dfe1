/// An entity tag (RFC 9110 §8.8.3): an opaque quoted string, weak when prefixed by `W/`.
public struct EntityTag: Hashable, Sendable, CustomStringConvertible {
    /// The opaque tag without quotes.
    public var opaque: String
    public var isWeak: Bool

    public init(_ opaque: String, weak: Bool = false) {
        self.opaque = opaque
        self.isWeak = weak
    }

    /// Parses `"xyz"` or `W/"xyz"`; nil for anything else (unquoted tags, stray quotes).
    public init?(parsing text: some StringProtocol) {
        var rest = text.trimmingSpaces()
        var weak = false
        if rest.hasPrefix("W/") {
            weak = true
            rest = rest.dropFirst(2)
        }
        guard rest.count >= 2, rest.first == "\"", rest.last == "\"" else { return nil }
        let inner = rest.dropFirst().dropLast()
        // etagc = %x21 / %x23-7E / obs-text: no quote, no space, no controls.
        guard inner.unicodeScalars.allSatisfy({ $0 == "\u{21}" || ($0.value >= 0x23 && $0.value != 0x7F) })
        else { return nil }
        self.init(String(inner), weak: weak)
    }

    /// The header form: `"xyz"` or `W/"xyz"`.
    public var description: String { isWeak ? "W/\"\(opaque)\"" : "\"\(opaque)\"" }

    /// Strong comparison: both strong and the same opaque tag.
    public func strongMatches(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaque == other.opaque
    }

    /// Weak comparison: the same opaque tag, whatever the weakness.
    public func weakMatches(_ other: EntityTag) -> Bool {
        opaque == other.opaque
    }
}

/// The value of `If-Match` or `If-None-Match`: `*` or a list of entity tags.
public enum EntityTagCondition: Equatable, Sendable {
    case any
    case tags([EntityTag])

    /// Parses a header value; the list may hold empty elements. Nil when any element is
    /// not a valid entity tag, so that a garbled condition is never taken for a match.
    public init?(parsing text: some StringProtocol) {
        let trimmed = text.trimmingSpaces()
        if trimmed == "*" {
            self = .any
            return
        }
        var tags: [EntityTag] = []
        for element in splitEntityTagList(trimmed) {
            guard let tag = EntityTag(parsing: element) else { return nil }
            tags.append(tag)
        }
        guard !tags.isEmpty else { return nil }
        self = .tags(tags)
    }

    /// Whether `current` matches: strong comparison for `If-Match`, weak for `If-None-Match`.
    public func matches(_ current: EntityTag?, strong: Bool) -> Bool {
        switch self {
        case .any:
            return current != nil
        case .tags(let tags):
            guard let current else { return false }
            return tags.contains { strong ? $0.strongMatches(current) : $0.weakMatches(current) }
        }
    }
}

/// Splits a comma-separated list of entity tags, honouring commas inside quotes.
private func splitEntityTagList(_ text: Substring) -> [Substring] {
    var elements: [Substring] = []
    var start = text.startIndex
    var inQuotes = false
    var index = text.startIndex
    while index < text.endIndex {
        let character = text[index]
        if character == "\"" {
            inQuotes.toggle()
        } else if character == ",", !inQuotes {
            elements.append(text[start..<index])
            start = text.index(after: index)
        }
        index = text.index(after: index)
    }
    elements.append(text[start...])
    return elements.map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
}
