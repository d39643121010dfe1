import Foundation
public import SluiceCore
import Synchronization

/// A change the live event streams carry (docs/api.md, "Events").
public enum JobEvent: Sendable, Equatable {
    case job(JobSnapshot)
    case removed(id: String)

    public var jobID: String {
        switch self {
        case .job(let job): job.id
        case .removed(let id): id
        }
    }
}

/// An event as every subscriber receives it: encoded once, when a stream first sends it (or a
/// reconnecting client is replayed it), not once per open event stream nor for an event no
/// stream ever sends, with the `id:` a client sends back as `Last-Event-ID`.
public struct JobEventMessage: Sendable {
    public let event: JobEvent
    /// `job` or `removed` (the SSE event name).
    public let name: String
    /// `RUN-SEQUENCE`: this run of the service and the event's place in it.
    public let id: String
    private let encoded: EncodedOnce

    /// The job's JSON, or `{"id":…}` for a removal, on one line.
    public var data: String { encoded.text }

    public init(_ event: JobEvent, id: String) {
        self.event = event
        self.id = id
        switch event {
        case .job: name = "job"
        case .removed: name = "removed"
        }
        encoded = EncodedOnce(event)
        size = Self.size(of: event) + name.utf8.count + id.utf8.count + 32
    }

    fileprivate init(_ message: JobEventMessage, id: String) {
        event = message.event
        name = message.name
        encoded = message.encoded
        self.id = id
        size = message.size - message.id.utf8.count + id.utf8.count
    }

    /// About what the event costs to hold and to send, known before it is encoded: what a
    /// job's JSON holds beside its strings (its 27 names and fixed-size values, under 700
    /// bytes, `integrity` with no digest included), and the strings it carries (an expected
    /// digest's hexadecimal digits among them).
    let size: Int

    static func size(of event: JobEvent) -> Int {
        switch event {
        case .removed(let id):
            return id.utf8.count + 10
        case .job(let job):
            let strings =
                [
                    job.url, job.filename ?? "", job.path ?? "", job.notify ?? "", job.proxy ?? "", job.error?.message ?? "",
                    job.expectedDigest ?? "",
                ] + job.integrity.mirrors
            // `integrity`'s names and values around an expected digest: about 80 bytes more.
            let integrity = job.expectedDigest == nil ? 0 : 80
            // `sources`: about 60 bytes around each URL (the primary's is in `url` already).
            let sources = 60 + (job.integrity.mirrors.count * 60) + job.url.utf8.count
            return 720 + integrity + sources + strings.reduce(0) { $0 + $1.utf8.count }
                + (job.after + job.waitingFor).reduce(0) { $0 + $1.utf8.count + 3 }
        }
    }
}

/// An event's JSON, made the first time it is asked for and shared by every copy.
private final class EncodedOnce: Sendable {
    private let event: JobEvent
    private let made = Mutex<String?>(nil)

    init(_ event: JobEvent) { self.event = event }

    var text: String {
        made.withLock { made in
            if let made { return made }
            let text =
                switch event {
                case .job(let job): job.json.text
                case .removed(let id): JSONValue.object([("id", .string(id))]).text
                }
            made = text
            return text
        }
    }
}

/// Fans job events out to every subscriber, numbering them, and keeps a journal of the
/// latest so that a client that reconnects with `Last-Event-ID` gets what it missed instead
/// of everything. Every buffer is bounded in bytes: the journal, and each subscriber's queue
/// (a subscriber that stops reading is ended once its queue is full, and its client, coming
/// back with its last id, is replayed the journal or told to `reset`).
public final class JobEventBroadcaster: Sendable {
    /// What one subscriber may have waiting: well under 1 MiB whatever the number of jobs.
    public static let subscriberLimit = 512 << 10
    static let journalBytes = 8 << 20
    static let journalCount = 20_000

    /// Names this run of the service in every id, so an id from before a restart is never
    /// taken for one of this run's.
    public let run: String
    private let state = Mutex(State())

    private struct State {
        var sequence: UInt64 = 0
        var journal: [JobEventMessage] = []
        var journalStart = 0
        var journalBytes = 0
        var subscribers: [UUID: JobEventSubscriber] = [:]
    }

    public init() {
        run = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    /// How many streams are subscribed now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// The id of the newest event (what a snapshot taken now is up to date with).
    public var currentID: String { state.withLock { "\(run)-\($0.sequence)" } }

    /// A new subscriber and, when `lastEventID` is one of this run's ids and the journal
    /// still holds every event after it, those events; nil when the client must start over.
    func subscribe(after lastEventID: String?) -> (subscriber: JobEventSubscriber, missed: [JobEventMessage]?) {
        let subscriber = JobEventSubscriber(limit: Self.subscriberLimit)
        let id = UUID()
        subscriber.onEnd = { [weak self] in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        let missed: [JobEventMessage]? = state.withLock { state in
            state.subscribers[id] = subscriber
            guard let lastEventID, let seen = sequence(of: lastEventID), seen <= state.sequence else { return nil }
            let held = state.journal[state.journalStart...]
            let oldest = held.first.flatMap { sequence(of: $0.id) } ?? state.sequence + 1
            // Everything after `seen` must still be held (or nothing happened since).
            guard seen + 1 >= oldest else { return nil }
            return held.filter { (sequence(of: $0.id) ?? 0) > seen }
        }
        return (subscriber, missed)
    }

    private func sequence(of id: String) -> UInt64? {
        let parts = id.split(separator: "-")
        guard parts.count == 2, parts[0] == run else { return nil }
        return UInt64(parts[1])
    }

    func publish(_ event: JobEvent) {
        let encoded = JobEventMessage(event, id: "")
        let subscribers = state.withLock { state -> [JobEventSubscriber] in
            state.sequence += 1
            let message = JobEventMessage(encoded, id: "\(run)-\(state.sequence)")
            state.journal.append(message)
            state.journalBytes += message.size
            while state.journal.count - state.journalStart > Self.journalCount || state.journalBytes > Self.journalBytes {
                state.journalBytes -= state.journal[state.journalStart].size
                state.journalStart += 1
            }
            // Compacted now and then, not at every event.
            if state.journalStart > 4096, state.journalStart * 2 > state.journal.count {
                state.journal.removeFirst(state.journalStart)
                state.journalStart = 0
            }
            for subscriber in state.subscribers.values { subscriber.enqueue(message) }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.ring() }
    }

    /// Ends every stream (at shutdown).
    func finishAll() {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) {
            subscriber.finish()
        }
    }
}

/// One open event stream's queue: the events published since it subscribed, bounded in
/// bytes. When the client falls so far behind that the next event would not fit, the queue
/// is dropped and the stream ends (`overflowed`), rather than growing. The stream is told at
/// once (`overflowed()`), even while it waits for its client to read, and hands its writer
/// at most `batchBytes` at a time.
public final class JobEventSubscriber: Sendable {
    /// What the stream does next.
    public enum Next: Sendable {
        case events([JobEventMessage])
        /// Nothing happened for a while: a comment keeps proxies from closing the stream.
        case keepAlive
        /// The client did not keep up: end the stream; it reconnects with its last id.
        case overflowed
        case finished
    }

    private struct State {
        var queue: [JobEventMessage] = []
        var bytes = 0
        var overflowed = false
        var finished = false
        var keepAlive = false
    }

    /// What one `next()` hands the stream at most (one event more when a single event is
    /// larger): what the stream's writer holds while its client reads.
    public static let batchBytes = 64 << 10

    private let limit: Int
    private let state = Mutex(State())
    private let doorbell: AsyncStream<Void>
    private let bell: AsyncStream<Void>.Continuation
    /// Ends when the queue overflows or the stream finishes.
    private let alarm: AsyncStream<Void>
    private let alarmBell: AsyncStream<Void>.Continuation
    fileprivate let ended = Mutex<(@Sendable () -> Void)?>(nil)

    fileprivate var onEnd: (@Sendable () -> Void)? {
        get { ended.withLock { $0 } }
        set { ended.withLock { $0 = newValue } }
    }

    init(limit: Int) {
        self.limit = limit
        (doorbell, bell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (alarm, alarmBell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        bell.finish()
        alarmBell.finish()
    }

    fileprivate func enqueue(_ message: JobEventMessage) {
        let overflowed = state.withLock { state in
            guard !state.overflowed, !state.finished else { return false }
            if state.bytes + message.size > limit {
                state.overflowed = true
                state.queue = []
                state.bytes = 0
                return true
            }
            state.queue.append(message)
            state.bytes += message.size
            return false
        }
        if overflowed { alarmBell.finish() }
    }

    /// Waits until the queue overflows (true) or the stream finishes or is cancelled (false).
    /// One caller: the stream's watcher, which closes a connection its client stopped reading.
    public func overflowed() async -> Bool {
        for await _ in alarm {}
        return state.withLock { $0.overflowed }
    }

    fileprivate func ring() { bell.yield() }

    /// Asks for a keep-alive comment at the next `next()`.
    public func keepAlive() {
        state.withLock { $0.keepAlive = true }
        bell.yield()
    }

    /// Ends the stream after what is queued (at shutdown).
    public func finish() {
        state.withLock { $0.finished = true }
        bell.finish()
        alarmBell.finish()
    }

    /// Unsubscribes (the stream's client went away).
    public func cancel() {
        finish()
        onEnd?()
    }

    /// Waits for what the stream sends next.
    public func next() async -> Next {
        var iterator = doorbell.makeAsyncIterator()
        while true {
            let taken: Next? = state.withLock { state in
                if state.overflowed { return .overflowed }
                if !state.queue.isEmpty {
                    var count = 0
                    var bytes = 0
                    for message in state.queue {
                        count += 1
                        bytes += message.size
                        if bytes >= Self.batchBytes { break }
                    }
                    let events = Array(state.queue.prefix(count))
                    state.queue.removeFirst(count)
                    state.bytes -= bytes
                    return .events(events)
                }
                if state.keepAlive {
                    state.keepAlive = false
                    return .keepAlive
                }
                return state.finished ? .finished : nil
            }
            if let taken { return taken }
            if await iterator.next() == nil {
                return state.withLock { $0.queue.isEmpty }
                    ? .finished
                    : .events(
                        state.withLock { state in
                            defer { state.queue = [] }
                            return state.queue
                        })
            }
            if Task.isCancelled { return .finished }
        }
    }
}

/// What a new event stream sends: `event: reset` first when the client's last id cannot be
/// continued from, then `initial` (the missed events, or a snapshot), then `changes`.
public struct JobSubscription: Sendable {
    public var reset: Bool
    public var initial: [JobEventMessage]
    public var changes: JobEventSubscriber
}
