import AsyncHTTPClient
import Crypto
public import DownloadEngine
import Foundation
public import Logging
public import Metrics
import NIOCore
import NIOHTTP1
public import ServiceLifecycle
import Synchronization
public import SluiceCore

/// Tells webhooks that jobs ended or went: `--webhook` for every job, and a job's own
/// `notify`. Each event becomes a stored delivery per URL (made in the same call that
/// records the event, so it survives a restart); a loop beside the downloads sends what
/// is due, `POST` with the event as JSON, and tries again on anything but a 2xx or within
/// the timeout, on `WebhookSchedule`'s backoff. Nothing here is awaited by a download.
///
/// With a secret every attempt is signed: `Sluice-Signature: t=UNIX,v1=HEX`, where `v1`
/// is HMAC-SHA256(secret, "t.BODY") (docs/webhooks.md, "A receiver that checks the signature",
/// shows how to check it).
public final class WebhookDispatcher: Service, CustomStringConvertible {
    public var description: String { "WebhookDispatcher" }
    public struct Configuration: Sendable {
        /// Told of every job's events.
        public var url: String?
        public var secret: String?
        public var schedule: WebhookSchedule
        /// An attempt that has no answer by then has failed.
        public var timeout: Duration
        /// Attempts in flight at once to one receiver (an origin).
        public var concurrency: Int
        /// How long a delivered or given-up delivery of a live job is kept (its body holds the
        /// job's URL); a deleted job's go once its `removed` call is settled.
        public var retention: Duration

        public init(
            url: String? = nil, secret: String? = nil, schedule: WebhookSchedule = WebhookSchedule(),
            timeout: Duration = .seconds(10), concurrency: Int = 4, retention: Duration = .seconds(7 * 24 * 3600)
        ) {
            self.url = url
            self.secret = secret
            self.schedule = schedule
            self.timeout = timeout
            self.concurrency = concurrency
            self.retention = retention
        }
    }

    public let configuration: Configuration
    let repository: any JobRepository
    let client: Fetcher
    let logger: Logger
    let clock: ElapsedClock
    private let wake = WakeSignal()
    /// The receivers of deliveries stored since the loop last looked, and whether it must read
    /// the store for them instead (at its start, after a failed read).
    private let announced = Mutex<(receivers: Set<String>, readStore: Bool)>(([], true))
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
        stored(deliveries)
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

    /// Deliveries were stored by someone else (a delete's transaction): send them. Their
    /// receivers are named here, so that the loop need not read the store to find them.
    func stored(_ deliveries: [WebhookDelivery]) {
        guard !deliveries.isEmpty else { return }
        announced.withLock { $0.receivers.formUnion(deliveries.map(\.receiver)) }
        wake.signal()
    }

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
        guard URLCredentials.authority(of: url) != nil else { return "***" }
        return WebhookDelivery.receiver(of: url) + "/***"
    }

    /// Sends due deliveries until cancelled; what a previous run left pending goes first.
    /// Each receiver has a queue of its own (`serve`): one that never answers holds up its own
    /// deliveries only. This loop starts a receiver's queue when deliveries for it are stored,
    /// and wakes it when new ones are. The store's receivers are read at the start, after a
    /// failed read and, in a cluster, at every look (other nodes store deliveries too); a single
    /// node's job events name theirs (`stored`), so an event costs no read of the backlog.
    public func run() async {
        await cancelWhenGracefulShutdown { await self.deliver() }
    }

    private func deliver() async {
        let queues = ReceiverQueues()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.forgetSettledDeliveries() }
            while !Task.isCancelled {
                var wait = longestWait
                let (named, readStore) = announced.withLock { announced in
                    defer { announced = ([], false) }
                    return announced
                }
                var receivers = named
                do {
                    if readStore || longestWait != nil { receivers.formUnion(try await repository.deliveryReceivers()) }
                } catch {
                    logger.error("cannot read the receivers of pending webhook deliveries: \(error)")
                    announced.withLock { $0.readStore = true }
                    wait = .seconds(5)
                }
                for receiver in receivers {
                    guard let wake = queues.join(receiver) else { continue }
                    group.addTask { await self.serve(receiver, wake: wake, queues: queues) }
                }
                // Other nodes' deliveries are looked for every 30 s (real time): nothing here
                // wakes this node for them.
                await wake.wait(upTo: wait, sleep: Self.realSleep)
            }
            group.cancelAll()
        }
    }

    /// Every hour (real time), removes the settled deliveries older than the retention.
    private func forgetSettledDeliveries() async {
        while !Task.isCancelled {
            let cutoff = clock.now().addingTimeInterval(-Double(configuration.retention.components.seconds))
            do {
                let removed = try await repository.forgetDeliveries(settledBefore: cutoff)
                if removed > 0 { logger.info("removed \(removed) webhook deliveries settled before \(cutoff) (the retention)") }
            } catch {
                logger.warning("cannot remove webhook deliveries past their retention: \(error)")
            }
            try? await Self.realSleep(.seconds(3600))
        }
    }

    /// What ended a receiver queue's wait.
    private enum QueueEvent: Sendable {
        case attempted(id: String, saved: Bool)
        case woken
    }

    /// One receiver's queue: at most `concurrency` attempts at once, one per job (its
    /// deliveries in order, `failed` before `removed`), each delivery on its own schedule.
    /// Due deliveries are read by the store's index, at most as many as there are free
    /// attempts: an attempt's cost does not grow with the backlog. Ends when the receiver has
    /// nothing left to try.
    private func serve(_ receiver: String, wake: WakeSignal, queues: ReceiverQueues) async {
        await withTaskGroup(of: QueueEvent.self) { group in
            var inFlight: [String: String] = [:]
            var waiting = false
            while !Task.isCancelled {
                var wait: Duration? = .seconds(1)
                let looked = queues.look(receiver)
                do {
                    var jobs = Set(inFlight.values)
                    let due = try await repository.dueDeliveries(
                        receiver: receiver, now: clock.now(), excludingJobs: Array(jobs), limit: configuration.concurrency - inFlight.count
                    )
                    for delivery in due where jobs.insert(delivery.jobID).inserted {
                        inFlight[delivery.id] = delivery.jobID
                        group.addTask { .attempted(id: delivery.id, saved: await self.attempt(delivery)) }
                    }
                    if inFlight.isEmpty {
                        guard let next = try await repository.nextDeliveryAttempt(receiver: receiver) else {
                            if queues.leave(receiver, lookedAt: looked) { break }
                            continue
                        }
                        wait = .milliseconds(Int64(max(0, next.timeIntervalSince(clock.now())) * 1000) + 1)
                        if let longest = longestWait, let until = wait, until > longest { wait = longest }
                    }
                } catch {
                    // A full disk or a store away: wait before the next read, so that a
                    // failing store never makes a loop of calls to a receiver.
                    logger.error("cannot read the webhook deliveries to \(EndpointURL.redact(receiver)): \(error)")
                    wait = .seconds(5)
                }
                if !waiting {
                    waiting = true
                    // With attempts under way, a look every second for deliveries of other
                    // jobs that fell due; without, a sleep until the next is due.
                    let sleep = inFlight.isEmpty ? clock.sleep : Self.realSleep
                    group.addTask { [wait] in
                        await wake.wait(upTo: wait, sleep: sleep)
                        return .woken
                    }
                }
                guard let event = await group.next() else { break }
                switch event {
                case .attempted(let id, let saved):
                    inFlight[id] = nil
                    // An attempt the store could not record is still due: its job waits out
                    // the next look instead of calling the receiver again at once.
                    if !saved { try? await Self.realSleep(.seconds(5)) }
                case .woken:
                    waiting = false
                }
            }
            group.cancelAll()
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
            // A deleted job's last call is settled: nothing of it stays.
            if delivery.event == .removed, delivery.state != .pending {
                do { try await repository.forgetDeliveries(ofRemovedJob: delivery.jobID) } catch {
                    logger.warning("cannot remove the deliveries of removed job \(delivery.jobID) yet (the retention will): \(error)")
                }
            }
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
        return TransportFailureText.describe(error, target: "the receiver")
    }
}

/// The receivers whose queues run, each with the signal that wakes it. A queue leaves only
/// when nobody joined it since it last looked at the store (`look`), so a delivery stored as
/// it ends is never left without a queue, whoever took the signal that told of it.
final class ReceiverQueues: Sendable {
    private struct Queue {
        let wake: WakeSignal
        /// How many times the queue was joined while it ran.
        var joins: Int
    }

    private let queues = Mutex<[String: Queue]>([:])

    /// Wakes the receiver's queue; nil when it runs, else the signal of a new one to start.
    func join(_ receiver: String) -> WakeSignal? {
        queues.withLock { queues in
            if let running = queues[receiver] {
                queues[receiver]?.joins += 1
                running.wake.signal()
                return nil
            }
            let wake = WakeSignal()
            queues[receiver] = Queue(wake: wake, joins: 0)
            return wake
        }
    }

    /// Taken before a queue reads the store, and given to `leave`.
    func look(_ receiver: String) -> Int {
        queues.withLock { $0[receiver]?.joins ?? 0 }
    }

    /// Whether the queue may end: true, and it is gone, unless it was joined after `lookedAt`.
    func leave(_ receiver: String, lookedAt: Int) -> Bool {
        queues.withLock { queues in
            if let queue = queues[receiver], queue.joins != lookedAt { return false }
            queues[receiver] = nil
            return true
        }
    }
}
