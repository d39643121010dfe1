public import SluiceCore

/// `GET /queue`'s answer.
public struct QueueStatus: Sendable, Equatable {
    /// The queue's own settings (flags, `PATCH /queue`), as stored.
    public var settings: QueueSettings
    /// What the queue runs with now: its own settings under the schedule.
    public var inEffect: QueueInEffect
    /// The cache's free space as last seen (nil before the first look), and whether it is
    /// under the floor (nothing starts: `heldBy: "disk"`).
    public var freeSpace: Int64?
    public var diskLow = false
    /// The quotas and their counts.
    public var quota = QuotaLedger()
    public var counts: [JobState: Int]
    /// `--max-connections-per-host`, and the connections open to each host now.
    public var maxConnectionsPerHost: Int?
    public var connectionsPerHost: [String: Int] = [:]

    public var json: JSONValue {
        .object([
            ("paused", .bool(settings.paused)),
            // In effect now, and what set each (CONTRACT.md §7).
            ("maxActive", JSONValue(inEffect.maxActive)),
            ("limitRate", JSONValue(inEffect.limitRate)),
            ("run", .bool(inEffect.run)),
            ("setBy", inEffect.setByJSON),
            ("next", JSONValue(inEffect.next)),
            ("overrideUntil", JSONValue(inEffect.overrideUntil)),
            ("heldBy", diskLow ? .string(JobHold.disk.rawValue) : quota.reached ? .string(JobHold.quota.rawValue) : .null),
            ("freeSpace", JSONValue(freeSpace)),
            ("quota", quota.json),
            ("counts", .object(JobState.allCases.map { ($0.rawValue, JSONValue(counts[$0] ?? 0)) })),
            ("maxConnectionsPerHost", maxConnectionsPerHost.map { JSONValue($0) } ?? .null),
            ("connectionsPerHost", .object(connectionsPerHost.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) })),
        ])
    }
}
