public import Foundation

/// The queue's runtime settings (`GET` and `PATCH /queue`): stored, so they survive a
/// restart; `serve`'s flags give them only the first time.
public struct QueueSettings: Sendable, Equatable, Codable {
    /// A paused queue starts no job; running jobs go on.
    public var paused: Bool
    /// How many downloads run at once, 1...64.
    public var maxActive: Int
    /// Bytes per second for all downloads together; nil for no limit.
    public var limitRate: Int64?

    public static let maxActiveRange = 1...64

    public init(paused: Bool = false, maxActive: Int, limitRate: Int64? = nil) {
        self.paused = paused
        self.maxActive = maxActive
        self.limitRate = limitRate
    }
}

/// The body of `PATCH /queue`: any of `paused`, `maxActive`, `limitRate` (null removes the
/// limit), and `until` (RFC 3339): how long a change of what a schedule's rule sets overrides
/// the rule (by default, until the schedule's next change). Any other key, or a value out of
/// range, is `invalid_field` naming it.
public struct QueueSettingsPatch: Sendable, Equatable, Decodable {
    public var paused: Bool?
    public var maxActive: Int?
    public var limitRate: Patched<Int64>?
    public var until: Date?
    /// `quota`: `day`, `month` (bytes, null for none), `monthStartsOn` (checked here, applied
    /// over the quota in effect).
    public var quota: JSONValue?

    public init(paused: Bool? = nil, maxActive: Int? = nil, limitRate: Patched<Int64>? = nil, until: Date? = nil, quota: JSONValue? = nil) {
        self.paused = paused
        self.maxActive = maxActive
        self.limitRate = limitRate
        self.until = until
        self.quota = quota
    }

    public init(from decoder: any Decoder) throws {
        let body = try PatchBody(decoder, allowed: ["paused", "maxActive", "limitRate", "until", "quota"])
        paused = try body.value(Bool.self, "paused")
        maxActive = try body.value(Int.self, "maxActive")
        limitRate = try body.nullable(Int64.self, "limitRate")
        if let text = try body.value(String.self, "until") {
            guard let date = RFC3339.date(text) else {
                throw SluiceError(
                    .invalidField, "until must be an RFC 3339 date and time, such as 2026-12-01T02:00:00+01:00", field: "until")
            }
            until = date
        }
        if let quota = try body.value(JSONValue.self, "quota") {
            _ = try QuotaSettings(json: quota, over: .none)
            self.quota = quota
        }
        try validate()
    }

    /// The ranges of `PATCH /queue`; the job service checks a patch built another way
    /// (aria2's `changeGlobalOption`) the same before it applies it.
    public func validate() throws {
        if let maxActive, !QueueSettings.maxActiveRange.contains(maxActive) {
            throw SluiceError(.invalidField, "maxActive must be between 1 and 64", field: "maxActive")
        }
        if case .set(let rate) = limitRate { try RateLimit.validate(rate, field: "limitRate") }
    }

    public func applied(to settings: QueueSettings) -> QueueSettings {
        var settings = settings
        if let paused { settings.paused = paused }
        if let maxActive { settings.maxActive = maxActive }
        if let limitRate { settings.limitRate = limitRate.value }
        return settings
    }
}

/// A byte rate a user sets (`limitRate`): whole bytes per second, 1 to 1 TiB/s.
public enum RateLimit {
    public static let maximum: Int64 = 1 << 40

    public static func validate(_ rate: Int64, field: String) throws {
        guard (1...maximum).contains(rate) else {
            throw SluiceError(
                .invalidField, "\(field) must be a whole number of bytes per second from 1 to \(maximum), or null", field: field
            )
        }
    }
}
