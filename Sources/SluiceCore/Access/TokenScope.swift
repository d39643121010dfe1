/// What a named token may do. Each scope includes the ones before it: `read` (lists,
/// status, events, metrics, files), `add` (read, and creating jobs: what a browser extension
/// needs), `admin` (everything, the service's own token included).
public enum TokenScope: String, Sendable, Codable, CaseIterable, Comparable {
    case read
    case add
    case admin

    private var rank: Int {
        switch self {
        case .read: 0
        case .add: 1
        case .admin: 2
        }
    }

    public static func < (lhs: TokenScope, rhs: TokenScope) -> Bool { lhs.rank < rhs.rank }

    /// Whether a token of this scope may do what needs `needed`.
    public func allows(_ needed: TokenScope) -> Bool { needed <= self }
}
