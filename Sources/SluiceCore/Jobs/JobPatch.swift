public import Foundation

/// The body of `PATCH /jobs/ID`: any of `url`, `headers` (null for none), `priority`, `connections`,
/// `limitRate` (null removes it), `after`, `filename` (null goes back to the remote's
/// name), `notify` and `proxy` (null removes them), and `keepBytes`, which makes a new `url` that does not serve the same file a
/// 409 instead of a restart. Each value is validated as at creation; another key is
/// `invalid_field` naming it.
public struct JobPatch: Sendable, Equatable, Decodable {
    public var url: String?
    public var headers: [String: String]?
    public var priority: Int?
    public var connections: Int?
    public var limitRate: Patched<Int64>?
    public var after: [String]?
    public var filename: Patched<String>?
    public var keepBytes: Bool
    public var notify: Patched<String>?
    public var proxy: Patched<String>?
    /// Not before this instant; null removes it.
    public var startAt: Patched<Date>?
    public var ignoreSchedule: Bool?

    public static let fields: Set<String> = [
        "url", "headers", "priority", "connections", "limitRate", "after", "filename", "keepBytes", "notify", "proxy",
        "startAt", "ignoreSchedule",
    ]

    /// A patch that changes nothing, for callers that set fields one by one (aria2's
    /// `changeOption`); each value set is validated by the service as a PATCH's would be.
    public init() {
        keepBytes = false
    }

    public init(from decoder: any Decoder) throws {
        let body = try PatchBody(decoder, allowed: Self.fields)
        do {
            url = try body.value(String.self, "url")
        } catch {
            throw SluiceError(.invalidURL, "url must be a string holding an absolute http or https URL", field: "url")
        }
        // null: no extra headers any more.
        headers = try body.nullable([String: String].self, "headers").map { $0.value ?? [:] }
        priority = try body.value(Int.self, "priority")
        connections = try body.value(Int.self, "connections")
        limitRate = try body.nullable(Int64.self, "limitRate")
        after = try body.value([String].self, "after")
        filename = try body.nullable(String.self, "filename")
        keepBytes = try body.value(Bool.self, "keepBytes") ?? false
        notify = try body.nullable(String.self, "notify")
        proxy = try body.nullable(String.self, "proxy")
        startAt = try body.nullable(String.self, "startAt").map { patched in
            switch patched {
            case .set(let text): .set(try CreateJobRequest.instant(text, field: "startAt"))
            case .removed: .removed
            }
        }
        ignoreSchedule = try body.value(Bool.self, "ignoreSchedule")
        try validate()
    }

    /// Checks every field set against the rules of `POST /jobs`; a decoded patch has been
    /// checked already, one built field by field (aria2's `changeOption`) is checked by the
    /// job service before it applies it.
    public func validate() throws {
        if let url { try CreateJobRequest.validateURL(url) }
        if let headers { try CreateJobRequest.validateHeaders(headers) }
        if let priority { try CreateJobRequest.validatePriority(priority) }
        if let connections { try CreateJobRequest.validateConnections(connections) }
        if case .set(let rate) = limitRate { try RateLimit.validate(rate, field: "limitRate") }
        if let after { try CreateJobRequest.validateAfter(after) }
        if case .set(let name) = filename { try CreateJobRequest.validateFilename(name) }
        if case .set(let url) = notify { _ = try EndpointURL(url, schemes: EndpointURL.webhookSchemes, field: "notify") }
        if case .set(let url) = proxy { _ = try EndpointURL.proxy(url, field: "proxy") }
    }

    /// Whether a running download must stop and go on under the new values (at its next
    /// segment, from its checkpoint): what the engine was started with changed. Priority,
    /// `after`, `notify` and the rate apply without it.
    public var changesTheDownload: Bool {
        url != nil || headers != nil || connections != nil || filename != nil || proxy != nil
    }
}
