public import Foundation

/// One webhook call for one event of one job, tried until the receiver answers 2xx or
/// the schedule gives up; stored, so that retries survive a restart. Every attempt sends
/// the same `body` and the same `id` (`Sluice-Delivery`), so a receiver can drop repeats.
public struct WebhookDelivery: Sendable, Equatable {
    public enum State: String, Sendable {
        case pending
        case delivered
        case failed
    }

    public var id: String
    public var jobID: String
    public var event: WebhookEvent
    public var url: String
    /// `{"event": "...", "job": {...}}` as it was when the event happened.
    public var body: String
    public var state: State
    public var attempts: Int
    /// The status of the last answer; nil when there was none (a timeout, a refusal).
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAt: Date
    /// When the next attempt goes; nil once delivered or given up.
    public var nextAttemptAt: Date?
    public var deliveredAt: Date?

    public init(id: String, jobID: String, event: WebhookEvent, url: String, body: String, createdAt: Date) {
        self.id = id
        self.jobID = jobID
        self.event = event
        self.url = url
        self.body = body
        self.state = .pending
        self.attempts = 0
        self.createdAt = createdAt
        self.nextAttemptAt = createdAt
    }

    /// Who receives it: its URL's origin (`scheme://host[:port]`, lower-cased, without user
    /// information). Each receiver has a queue of its own, so one that never answers holds
    /// up only its own deliveries.
    public var receiver: String { Self.receiver(of: url) }

    public static func receiver(of url: String) -> String {
        guard let authority = URLCredentials.authority(of: url) else { return url.lowercased() }
        let host = authority.at.map { url.index(after: $0) } ?? authority.start
        return (url[..<authority.start] + url[host..<authority.end]).lowercased()
    }

    /// The body a delivery of `event` for `job` sends.
    public static func body(event: WebhookEvent, job: JobSnapshot) -> String {
        JSONValue.object([("event", .string(event.rawValue)), ("job", job.json)]).text
    }

    /// Records an attempt's answer: a 2xx delivers; anything else is tried again when the
    /// schedule allows, or fails the delivery.
    public mutating func attempted(status: Int?, error: String?, at now: Date, schedule: WebhookSchedule, jitter: Double) {
        attempts += 1
        lastStatus = status
        lastError = error
        if let status, (200..<300).contains(status) {
            state = .delivered
            deliveredAt = now
            nextAttemptAt = nil
            return
        }
        nextAttemptAt = schedule.nextAttempt(attempts: attempts, createdAt: createdAt, now: now, jitter: jitter)
        if nextAttemptAt == nil { state = .failed }
    }

    /// An attempt the target policy refused (docs/webhooks.md, "Where calls may go": the URL's
    /// name resolved to an address this service may not reach): it can never succeed, so it
    /// fails now, not after a day of retries.
    public mutating func refused(_ reason: String, at now: Date) {
        attempts += 1
        lastStatus = nil
        lastError = "forbidden_target: \(reason)"
        nextAttemptAt = nil
        state = .failed
    }

    /// As `GET /jobs/ID/deliveries` shows it: no body, the URL without credentials.
    public var json: JSONValue {
        .object([
            ("id", .string(id)),
            ("event", .string(event.rawValue)),
            ("url", .string(EndpointURL.redact(url))),
            ("state", .string(state.rawValue)),
            ("attempts", JSONValue(attempts)),
            ("lastStatus", lastStatus.map { JSONValue($0) } ?? .null),
            ("lastError", JSONValue(lastError)),
            ("createdAt", JSONValue(createdAt)),
            ("nextAttemptAt", JSONValue(nextAttemptAt)),
            ("deliveredAt", JSONValue(deliveredAt)),
        ])
    }
}
