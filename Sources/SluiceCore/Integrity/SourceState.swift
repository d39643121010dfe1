/// One source of a job's file (CONTRACT.md §8, `sources`): the primary URL or a mirror, the
/// bytes it brought, its failures, and whether it is still used.
public struct SourceState: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable {
        /// Used, or usable.
        case ok
        /// Given up on for its errors.
        case failed
        /// Refused for its content: another length, a digest that disagrees, bytes that did
        /// not verify.
        case excluded
    }

    public var url: String
    public var bytes: Int64
    public var failures: Int
    public var state: State

    public init(url: String, bytes: Int64 = 0, failures: Int = 0, state: State = .ok) {
        self.url = url
        self.bytes = bytes
        self.failures = failures
        self.state = state
    }

    public var json: JSONValue {
        .object([
            // Credentials in a mirror's URL are never shown, as in the job's.
            ("url", .string(URLCredentials.redacted(url))), ("bytes", .integer(bytes)), ("failures", JSONValue(failures)),
            ("state", .string(state.rawValue)),
        ])
    }
}
