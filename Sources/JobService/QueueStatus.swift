public import SluiceCore

/// `GET /queue`'s answer.
public struct QueueStatus: Sendable, Equatable {
    public var settings: QueueSettings
    public var counts: [JobState: Int]
    /// `--max-connections-per-host`, and the connections open to each host now.
    public var maxConnectionsPerHost: Int?
    public var connectionsPerHost: [String: Int] = [:]

    public var json: JSONValue {
        .object([
            ("paused", .bool(settings.paused)),
            ("maxActive", JSONValue(settings.maxActive)),
            ("limitRate", JSONValue(settings.limitRate)),
            ("counts", .object(JobState.allCases.map { ($0.rawValue, JSONValue(counts[$0] ?? 0)) })),
            ("maxConnectionsPerHost", maxConnectionsPerHost.map { JSONValue($0) } ?? .null),
            ("connectionsPerHost", .object(connectionsPerHost.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) })),
        ])
    }
}
