import Foundation

/// `Link` header values (RFC 8288) as far as mirrors need them (RFC 6249): each link's
/// target, its `rel` types and its `pri` (1 is the most preferred; none is 999999, RFC 6249
/// §3.2). Targets are resolved against the response's URL; only http and https targets are
/// kept. A value that does not parse yields the links before it.
public enum LinkHeader {
    public struct Link: Sendable, Equatable {
        public var target: String
        public var relations: Set<String>
        public var priority: Int
        /// `type`, lower-case, when given (`application/metalink4+xml`).
        public var type: String?
    }

    /// At most this many links are read from one response.
    public static let maximumLinks = 64

    public static func links(_ values: [String], base: String) -> [Link] {
        var links: [Link] = []
        let baseURL = URL(string: base)
        for value in values {
            var rest = Substring(value)
            while links.count < maximumLinks {
                rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
                guard rest.first == "<", let close = rest.firstIndex(of: ">") else { break }
                let reference = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
                var relations: Set<String> = []
                var priority = 999_999
                var type: String?
                // Parameters up to the next link (a comma outside quotes).
                while let semicolon = rest.drop(while: { $0 == " " || $0 == "\t" }).first, semicolon == ";" {
                    rest = rest.drop { $0 == " " || $0 == "\t" }.dropFirst()
                    let name = rest.prefix { $0 != "=" && $0 != ";" && $0 != "," }.trimmingSpaces().lowercased()
                    rest = rest.dropFirst(rest.prefix { $0 != "=" && $0 != ";" && $0 != "," }.count)
                    var parameter = ""
                    if rest.first == "=" {
                        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
                        if rest.first == "\"" {
                            let body = rest.dropFirst()
                            guard let end = body.firstIndex(of: "\"") else { return links }
                            parameter = String(body[..<end])
                            rest = body[body.index(after: end)...]
                        } else {
                            let token = rest.prefix { $0 != ";" && $0 != "," }
                            parameter = String(token.trimmingSpaces())
                            rest = rest.dropFirst(token.count)
                        }
                    }
                    switch name {
                    case "rel": relations.formUnion(parameter.lowercased().split(separator: " ").map(String.init))
                    case "pri": priority = Int(parameter).map { min(max($0, 1), 999_999) } ?? priority
                    case "type": type = parameter.lowercased()
                    default: break
                    }
                }
                guard let resolved = URL(string: String(reference), relativeTo: baseURL)?.absoluteURL,
                    let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https"
                else { continue }
                links.append(Link(target: resolved.absoluteString, relations: relations, priority: priority, type: type))
            }
        }
        return links
    }

    /// The mirrors a response names (`rel=duplicate`), most preferred first, the order given
    /// among equals.
    public static func duplicates(_ values: [String], base: String) -> [String] {
        links(values, base: base).enumerated().filter { $0.element.relations.contains("duplicate") }
            .sorted { ($0.element.priority, $0.offset) < ($1.element.priority, $1.offset) }.map(\.element.target)
    }
}
