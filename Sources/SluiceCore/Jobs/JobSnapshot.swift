public import Foundation

/// A job as the API returns it, the store persists it and the dashboard renders it.
/// Runtime handles (tasks, clients, files) never live here.
public struct JobSnapshot: Sendable, Equatable, Decodable {
    // What every job has and the queue reads often, inline.
    public var id: String
    public var url: String
    public var state: JobState
    public var filename: String?
    public var bytesTotal: Int64?
    public var bytesDone: Int64
    public var speed: Double
    public var eta: Double?
    public var connections: Int
    public var resumable: Bool
    public var priority: Int
    public var createdAt: Date
    public var updatedAt: Date
    /// A queued job waiting out a remote's `Retry-After`: when it may start again. It
    /// gave its slot back meanwhile.
    public var retryAt: Date?
    /// Whether the remote's TLS certificate goes unverified (`"insecure": true`).
    public var insecure = false
    /// What a job may have and most jobs do not (`Extras`): one box shared, unchanged, by
    /// every job that has none of it, copied on write. A service holding 200,000 live jobs
    /// keeps these fields' 200-odd bytes only for the jobs that set one.
    private var extras = Extras.none

    /// The digest of the finished file (after completion).
    public var sha256: String? {
        get { extras.sha256 }
        set { setExtra(\.sha256, newValue) }
    }
    /// The path relative to `documents/` (after completion).
    public var path: String? {
        get { extras.path }
        set { setExtra(\.path, newValue) }
    }
    public var error: JobError? {
        get { extras.error }
        set { setExtra(\.error, newValue) }
    }
    public var completedAt: Date? {
        get { extras.completedAt }
        set { setExtra(\.completedAt, newValue) }
    }
    /// Jobs that must complete before this one starts.
    public var after: [String] {
        get { extras.after }
        set { setExtra(\.after, newValue) }
    }
    /// Those of `after` not completed yet (empty once the job has started).
    public var waitingFor: [String] {
        get { extras.waitingFor }
        set { setExtra(\.waitingFor, newValue) }
    }
    /// Bytes per second for this job, under the queue's limit; nil for none.
    public var limitRate: Int64? {
        get { extras.limitRate }
        set { setExtra(\.limitRate, newValue) }
    }
    /// A webhook URL told when this job ends or goes, besides `--webhook`'s.
    public var notify: String? {
        get { extras.notify }
        set { setExtra(\.notify, newValue) }
    }
    /// The proxy this job's connections go through, instead of the service's.
    public var proxy: String? {
        get { extras.proxy }
        set { setExtra(\.proxy, newValue) }
    }
    /// The node running the job, in a cluster (`--store postgres://…`); nil otherwise.
    public var node: String? {
        get { extras.node }
        set { setExtra(\.node, newValue) }
    }
    /// Not before this instant (`startAt`): `queued`, held, until then.
    public var startAt: Date? {
        get { extras.startAt }
        set { setExtra(\.startAt, newValue) }
    }
    /// Not held by the schedule's closed windows (`ignoreSchedule`).
    public var ignoreSchedule: Bool {
        get { extras.ignoreSchedule }
        set { setExtra(\.ignoreSchedule, newValue) }
    }
    /// What holds a `queued` job back now (`JobHold`), as the runner last saw it; nil when
    /// nothing does. Not stored: the runner works it out again from what is.
    public var heldBy: JobHold? {
        get { extras.heldBy }
        set { setExtra(\.heldBy, newValue) }
    }

    // Not in the JSON: what the job was created with.
    public var requestedFilename: String? {
        get { extras.requestedFilename }
        set { setExtra(\.requestedFilename, newValue) }
    }
    /// The digest the file must have, as stored: the hexadecimal digits of a SHA-256 (what
    /// every job before `checksum` stored), or `ALGO=HEX` for another algorithm.
    public var expectedDigest: String? {
        get { extras.expectedDigest }
        set { setExtra(\.expectedDigest, newValue) }
    }
    /// `expectedDigest` read (`checksum`, or `sha256`, on create).
    public var expectedChecksum: Checksum? {
        get {
            guard let text = expectedDigest else { return nil }
            return text.contains("=") ? try? Checksum(parsing: text) : Checksum(.sha256, hex: text)
        }
        set { expectedDigest = newValue.map { $0.algorithm == .sha256 ? $0.hex : $0.description } }
    }
    /// Where the job's checksum and signature come from, and what their checks found
    /// (CONTRACT.md §8); empty for most jobs.
    public var integrity: JobIntegrity {
        get { extras.integrity }
        set { setExtra(\.integrity, newValue) }
    }
    public var headers: [String: String] {
        get { extras.headers }
        set { setExtra(\.headers, newValue) }
    }
    /// The sub-directory of `documents/` the file goes into (aria2's `dir`), as relative
    /// plain names joined with `/`; nil for `documents/` itself. `path` shows it once placed.
    public var directory: String? {
        get { extras.directory }
        set { setExtra(\.directory, newValue) }
    }

    /// Sets one of the extra fields, copying them first unless this job alone holds them; a
    /// value the job already has changes nothing (and copies nothing).
    private mutating func setExtra<Value: Equatable>(_ field: ReferenceWritableKeyPath<Extras, Value>, _ value: Value) {
        guard extras[keyPath: field] != value else { return }
        if !isKnownUniquelyReferenced(&extras) { extras = extras.copy() }
        extras[keyPath: field] = value
    }

    /// The fields a job may leave unset, in a box of their own (copy on write: changed only
    /// through `setExtra`, when one job holds it). `none` is every job's until it sets one.
    private final class Extras: Equatable, @unchecked Sendable {
        static let none = Extras()

        var sha256: String?
        var path: String?
        var error: JobError?
        var completedAt: Date?
        var after: [String] = []
        var waitingFor: [String] = []
        var limitRate: Int64?
        var notify: String?
        var proxy: String?
        var node: String?
        var requestedFilename: String?
        var expectedDigest: String?
        var integrity = JobIntegrity()
        var headers: [String: String] = [:]
        var directory: String?
        var startAt: Date?
        var ignoreSchedule = false
        var heldBy: JobHold?

        func copy() -> Extras {
            let copy = Extras()
            copy.sha256 = sha256
            copy.path = path
            copy.error = error
            copy.completedAt = completedAt
            copy.after = after
            copy.waitingFor = waitingFor
            copy.limitRate = limitRate
            copy.notify = notify
            copy.proxy = proxy
            copy.node = node
            copy.requestedFilename = requestedFilename
            copy.expectedDigest = expectedDigest
            copy.integrity = integrity
            copy.headers = headers
            copy.directory = directory
            copy.startAt = startAt
            copy.ignoreSchedule = ignoreSchedule
            copy.heldBy = heldBy
            return copy
        }

        static func == (lhs: Extras, rhs: Extras) -> Bool {
            lhs === rhs
                || (lhs.sha256 == rhs.sha256 && lhs.path == rhs.path && lhs.error == rhs.error && lhs.completedAt == rhs.completedAt
                    && lhs.after == rhs.after && lhs.waitingFor == rhs.waitingFor && lhs.limitRate == rhs.limitRate
                    && lhs.notify == rhs.notify && lhs.proxy == rhs.proxy && lhs.node == rhs.node
                    && lhs.requestedFilename == rhs.requestedFilename && lhs.expectedDigest == rhs.expectedDigest
                    && lhs.integrity == rhs.integrity && lhs.headers == rhs.headers && lhs.directory == rhs.directory
                    && lhs.startAt == rhs.startAt
                    && lhs.ignoreSchedule == rhs.ignoreSchedule && lhs.heldBy == rhs.heldBy)
        }
    }

    public struct JobError: Sendable, Equatable, Codable {
        public var code: String
        public var message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    public init(
        id: String, url: String, state: JobState, connections: Int, priority: Int, createdAt: Date,
        requestedFilename: String? = nil, expectedDigest: String? = nil, headers: [String: String] = [:]
    ) {
        self.id = id
        self.url = url
        self.state = state
        self.filename = requestedFilename
        self.bytesDone = 0
        self.speed = 0
        self.connections = connections
        self.resumable = false
        self.priority = priority
        self.createdAt = createdAt
        self.updatedAt = createdAt
        if requestedFilename != nil { self.requestedFilename = requestedFilename }
        if expectedDigest != nil { self.expectedDigest = expectedDigest }
        if !headers.isEmpty { self.headers = headers }
    }

    /// 0...1, 1 when completed, nil while the size is unknown.
    public var progress: Double? {
        if state == .completed { return 1 }
        guard let bytesTotal else { return nil }
        return bytesTotal == 0 ? 0 : min(1, Double(bytesDone) / Double(bytesTotal))
    }

    // MARK: JSON (docs/api.md, "A job"): every key present, nulls included.

    private enum CodingKeys: String, CodingKey {
        case id, url, state, filename, bytesTotal, bytesDone, progress, speed, eta, connections, resumable
        case sha256, path, error, priority, createdAt, updatedAt, completedAt, retryAt, after, waitingFor, limitRate
        case notify, proxy, insecure, node, startAt, ignoreSchedule, heldBy
    }

    /// The job as the API shows it, keys in the order of docs/api.md, "A job".
    public var json: JSONValue {
        .object([
            ("id", .string(id)),
            // Its password never shown (`user:***@host`).
            ("url", .string(URLCredentials.redacted(url))),
            ("state", .string(state.rawValue)),
            ("filename", JSONValue(filename)),
            ("bytesTotal", JSONValue(bytesTotal)),
            ("bytesDone", .integer(bytesDone)),
            // Rounded down, so that 1 means done and never "almost done".
            ("progress", JSONValue(progress.map { ($0 * 10_000).rounded(.down) / 10_000 })),
            ("speed", .number(state == .running ? speed.rounded() : 0)),
            ("eta", JSONValue(state == .running ? eta.map { ($0 * 10).rounded() / 10 } : nil)),
            ("connections", JSONValue(connections)),
            ("resumable", .bool(resumable)),
            ("sha256", JSONValue(sha256)),
            ("integrity", integrityJSON),
            ("sources", sourcesJSON),
            ("path", JSONValue(path)),
            ("error", error.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) } ?? .null),
            ("priority", JSONValue(priority)),
            ("createdAt", JSONValue(createdAt)),
            ("updatedAt", JSONValue(updatedAt)),
            ("completedAt", JSONValue(completedAt)),
            ("retryAt", JSONValue(retryAt)),
            ("after", .array(after.map { .string($0) })),
            ("waitingFor", .array(waitingFor.map { .string($0) })),
            ("heldBy", JSONValue(heldBy?.rawValue)),
            ("startAt", JSONValue(startAt)),
            ("ignoreSchedule", .bool(ignoreSchedule)),
            ("limitRate", JSONValue(limitRate)),
            // Credentials in either URL are never shown (issue 13).
            ("notify", JSONValue(notify.map(EndpointURL.redact))),
            ("proxy", JSONValue(proxy.map(EndpointURL.redact))),
            ("insecure", .bool(insecure)),
            ("node", JSONValue(node)),
        ])
    }

    /// CONTRACT.md §8: the digest expected and where it came from, whether the file had it
    /// (null until it is known), and the signature's check (null until one is made).
    var integrityJSON: JSONValue {
        let expected = expectedChecksum.map { checksum -> JSONValue in
            .object([
                ("algorithm", .string(checksum.algorithm.rawValue)), ("value", .string(checksum.hex)),
                ("source", .string(integrity.expectedSource ?? JobIntegrity.ExpectedSource.checksum)),
            ])
        }
        var verified: Bool?
        if expected != nil, state == .completed { verified = true }
        if state == .failed, error?.code == SluiceError.Code.checksumMismatch.rawValue { verified = false }
        return .object([
            ("expected", expected ?? .null), ("verified", verified.map(JSONValue.bool) ?? .null),
            ("signature", integrity.signature?.json ?? .null),
        ])
    }

    /// CONTRACT.md §8: the primary and the mirrors, in order, with what each brought; before
    /// a run, the URLs given and nothing brought.
    public var sources: [SourceState] {
        integrity.sources.isEmpty
            ? [SourceState(url: url, bytes: bytesDone)] + integrity.mirrors.map { SourceState(url: $0) } : integrity.sources
    }

    var sourcesJSON: JSONValue { .array(sources.map(\.json)) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id), url: try container.decode(String.self, forKey: .url),
            state: try container.decode(JobState.self, forKey: .state),
            connections: try container.decode(Int.self, forKey: .connections),
            priority: try container.decode(Int.self, forKey: .priority),
            createdAt: try container.decode(Date.self, forKey: .createdAt)
        )
        filename = try container.decodeIfPresent(String.self, forKey: .filename)
        bytesTotal = try container.decodeIfPresent(Int64.self, forKey: .bytesTotal)
        bytesDone = try container.decode(Int64.self, forKey: .bytesDone)
        speed = try container.decodeIfPresent(Double.self, forKey: .speed) ?? 0
        eta = try container.decodeIfPresent(Double.self, forKey: .eta)
        resumable = try container.decode(Bool.self, forKey: .resumable)
        sha256 = try container.decodeIfPresent(String.self, forKey: .sha256)
        path = try container.decodeIfPresent(String.self, forKey: .path)
        error = try container.decodeIfPresent(JobError.self, forKey: .error)
        updatedAt = try container.decode(Date.self, forKey: .updatedAt)
        completedAt = try container.decodeIfPresent(Date.self, forKey: .completedAt)
        retryAt = try container.decodeIfPresent(Date.self, forKey: .retryAt)
        after = try container.decodeIfPresent([String].self, forKey: .after) ?? []
        waitingFor = try container.decodeIfPresent([String].self, forKey: .waitingFor) ?? []
        limitRate = try container.decodeIfPresent(Int64.self, forKey: .limitRate)
        notify = try container.decodeIfPresent(String.self, forKey: .notify)
        proxy = try container.decodeIfPresent(String.self, forKey: .proxy)
        insecure = try container.decodeIfPresent(Bool.self, forKey: .insecure) ?? false
        node = try container.decodeIfPresent(String.self, forKey: .node)
        startAt = try container.decodeIfPresent(Date.self, forKey: .startAt)
        ignoreSchedule = try container.decodeIfPresent(Bool.self, forKey: .ignoreSchedule) ?? false
        heldBy = try container.decodeIfPresent(String.self, forKey: .heldBy).flatMap(JobHold.init(rawValue:))
    }
}
