import AsyncHTTPClient
import Crypto
public import DownloadEngine
public import Foundation
public import Logging
public import Metrics
import NIOCore
import NIOHTTP1
public import SluiceCore

/// Tells webhooks that jobs ended or went: `--webhook` for every job, and a job's own
/// `notify`. Each event becomes a stored delivery per URL (made in the same call that
/// records the event, so it survives a restart); a loop beside the downloads sends what
/// is due, `POST` with the event as JSON, and tries again on anything but a 2xx or within
/// the timeout, on `WebhookSchedule`'s backoff. Nothing here is awaited by a download.
///
/// With a secret every attempt is signed: `Sluice-Signature: t=UNIX,v1=HEX`, where `v1`
/// is HMAC-SHA256(secret, "t.BODY") (the README shows how to check it).
public final class WebhookDispatcher: Sendable {
    public struct Configuration: Sendable {
        /// Told of every job's events.
        public var url: String?
        public var secret: String?
        public var schedule: WebhookSchedule
        /// An attempt that has no answer by then has failed.
        public var timeout: Duration
        /// Attempts in flight at once.
        public var concurrency: Int

        public init(
            url: String? = nil, secret: String? = nil, schedule: WebhookSchedule = WebhookSchedule(),
            timeout: Duration = .seconds(10), concurrency: Int = 8
        ) {
            self.url = url
            self.secret = secret
            self.schedule = schedule
            self.timeout = timeout
            self.concurrency = concurrency
        }
    }

    public let configuration: Configuration
    let repository: any JobRepository
    let client: Fetcher
    let logger: Logger
    let clock: ElapsedClock
    private let wake = WakeSignal()
    private let outcomes: [String: Counter]
    /// In a cluster, deliveries another node recorded (or claimed, then died) are looked for
    /// every 30 s: nothing here wakes this node for them. Nil for a single node.
    private let longestWait: Duration?

    public init(
        configuration: Configuration, repository: any JobRepository, client: Fetcher, clock: ElapsedClock = .continuous,
        metrics: any MetricsFactory = MetricsSystem.factory, logger: Logger = Logger(label: "sluice.webhooks")
    ) {
        self.configuration = configuration
        self.repository = repository
        self.client = client
        self.clock = clock
        self.logger = logger
        self.longestWait = repository is any ClusterStore ? .seconds(30) : nil
        self.outcomes = Dictionary(
            uniqueKeysWithValues: ["delivered", "retried", "failed"].map {
                ($0, Counter(label: "sluice_webhook_deliveries_total", dimensions: [("outcome", $0)], factory: metrics))
            }
        )
    }

    /// Records `event` for `job`: one delivery per webhook URL that applies, stored before
    /// this returns, sent by `run()`. (A single node's job changes store theirs with the
    /// change itself, through `JobWrites`.)
    func record(_ event: WebhookEvent, job: JobSnapshot) async {
        let deliveries = deliveries(for: event, job: job)
        guard !deliveries.isEmpty else { return }
        do {
            try await repository.saveDeliveries(deliveries)
        } catch {
            logger.error("cannot store the \(event.rawValue) webhook of job \(job.id): \(error)")
            return
        }
        wake.signal()
    }

    /// The deliveries that tell `event` of `job`, one per URL (the service's and the job's
    /// own), not stored yet: the job's write stores them in its transaction (`JobWrites`), a delete
    /// with the removal.
    func deliveries(for event: WebhookEvent, job: JobSnapshot) -> [WebhookDelivery] {
        var urls: [String] = []
        for url in [configuration.url, job.notify].compactMap({ $0 }) where !urls.contains(url) { urls.append(url) }
        let body = WebhookDelivery.body(event: event, job: job)
        let now = clock.now()
        return urls.map {
            WebhookDelivery(id: UUID().uuidString.lowercased(), jobID: job.id, event: event, url: $0, body: body, createdAt: now)
        }
    }

    /// Deliveries were stored by someone else (a delete's transaction): send them.
    func stored() { wake.signal() }

    /// A job's deliveries, oldest first. The service's own `--webhook` URL is shown as its
    /// origin only (`https://hooks.example.com/***`): its path and query, where Slack-style
    /// hooks keep their secret, are the operator's, not every API user's to read.
    public func deliveries(jobID: String) async throws -> [WebhookDelivery] {
        let service = configuration.url
        return try await repository.deliveries(jobID: jobID).map { delivery in
            guard delivery.url == service else { return delivery }
            var shown = delivery
            shown.url = Self.originOnly(delivery.url)
            return shown
        }
    }

    /// `scheme://host[:port]/***`: a URL without its user information, path and query.
    static func originOnly(_ url: String) -> String {
        guard let authority = URLCredentials.authority(of: url) else { return "***" }
        let host = authority.at.map { url.index(after: $0) } ?? authority.start
        return url[..<authority.start] + url[host..<authority.end] + "/***"
    }

    /// Sends due deliveries until cancelled; what a previous run left pending goes first.
    public func run() async {
        while !Task.isCancelled {
            let pending: [WebhookDelivery]
            do {
                pending = try await repository.pendingDeliveries()
            } catch {
                logger.error("cannot read pending webhook deliveries: \(error)")
                await wake.wait(upTo: .seconds(5), sleep: Self.realSleep)
                continue
            }
            let now = clock.now()
            let due = pending.filter { ($0.nextAttemptAt ?? now) <= now }.prefix(configuration.concurrency)
            if !due.isEmpty {
                let allSaved = await withTaskGroup(of: Bool.self) { group in
                    // One job's deliveries one after another, oldest first (`failed` before
                    // `removed`); different jobs' at once.
                    for (_, deliveries) in Dictionary(grouping: due, by: \.jobID) {
                        group.addTask {
                            var saved = true
                            for delivery in deliveries.sorted(by: { $0.createdAt < $1.createdAt }) {
                                saved = await self.attempt(delivery) && saved
                            }
                            return saved
                        }
                    }
                    return await group.reduce(true) { $0 && $1 }
                }
                // An attempt the store could not record is still due: wait before the
                // next, so that a full disk never makes a loop of calls to a receiver.
                if !allSaved { await wake.wait(upTo: .seconds(5), sleep: Self.realSleep) }
                continue
            }
            let next = pending.compactMap(\.nextAttemptAt).min()
            let wait = next.map { Duration.milliseconds(Int64(max(0, $0.timeIntervalSince(now)) * 1000) + 1) }
            if let longest = longestWait, wait.map({ $0 >= longest }) ?? true {
                // The poll for deliveries other nodes stored bounds a real wait (real time);
                // a retry's time is a rule (the service's clock).
                await wake.wait(upTo: longest, sleep: Self.realSleep)
            } else {
                await wake.wait(upTo: wait, sleep: clock.sleep)
            }
        }
    }

    /// One attempt: sends, records the answer, and counts the outcome. False when the
    /// answer could not be stored.
    private func attempt(_ delivery: WebhookDelivery) async -> Bool {
        var delivery = delivery
        var status: Int?
        var failure: String?
        var refusal: String?
        do {
            var request = HTTPClientRequest(url: delivery.url)
            request.method = .POST
            for (name, value) in headers(for: delivery) { request.headers.add(name: name, value: value) }
            let response = try await client.sendOnce(
                request, body: ByteBuffer(string: delivery.body), deadline: .now() + TimeAmount(configuration.timeout), logger: logger
            )
            status = Int(response.status.code)
            // The answer's body is read (up to 64 KiB) so the connection can be reused, then dropped.
            var read = 0
            for try await part in response.body {
                read += part.readableBytes
                if read > 64 << 10 { break }
            }
        } catch let error as SluiceError where error.code == .forbiddenTarget {
            refusal = error.message
        } catch {
            failure = Self.describe(error)
        }
        if Task.isCancelled, status == nil, refusal == nil { return true }
        if let status, !(200..<300).contains(status) { failure = "the receiver answered \(status)" }
        if let refusal {
            delivery.refused(refusal, at: clock.now())
        } else {
            delivery.attempted(
                status: status, error: failure, at: clock.now(), schedule: configuration.schedule, jitter: Double.random(in: 0..<1)
            )
        }
        let outcome = delivery.state == .delivered ? "delivered" : delivery.state == .failed ? "failed" : "retried"
        outcomes[outcome]?.increment()
        if delivery.state != .delivered {
            logger.info(
                "webhook \(delivery.event.rawValue) of job \(delivery.jobID) to \(EndpointURL.redact(delivery.url)) \(outcome): \(delivery.lastError ?? "")"
            )
        }
        do {
            try await repository.saveDeliveries([delivery])
            return true
        } catch {
            logger.error("cannot save webhook delivery \(delivery.id): \(error)")
            return false
        }
    }

    /// A wait on real I/O (a store that failed, other nodes' deliveries), not a rule about
    /// time: real time, whatever the service's clock.
    static let realSleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// The headers of an attempt, signed now when there is a secret.
    func headers(for delivery: WebhookDelivery, at time: Date? = nil) -> [(String, String)] {
        var headers = [
            ("Content-Type", "application/json"), ("User-Agent", "sluice"),
            ("Sluice-Event", delivery.event.rawValue), ("Sluice-Delivery", delivery.id),
        ]
        if let secret = configuration.secret {
            headers.append(
                (
                    "Sluice-Signature",
                    Self.signature(secret: secret, timestamp: Int64((time ?? clock.now()).timeIntervalSince1970), body: delivery.body)
                ))
        }
        return headers
    }

    /// `t=UNIX,v1=HEX`, `v1` = HMAC-SHA256(secret, "t.BODY").
    public static func signature(secret: String, timestamp: Int64, body: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(timestamp).\(body)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// A failure in a line, without credentials.
    static func describe(_ error: any Error) -> String {
        if let error = error as? SluiceError { return error.message }
        if let error = error as? HTTPClientError, error == .deadlineExceeded { return "no answer within the timeout" }
        return EndpointURL.redact("\(error)")
    }
}
