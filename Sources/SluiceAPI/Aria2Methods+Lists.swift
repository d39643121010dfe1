import Aria2RPC
import Foundation
import JobService
import SluiceCore

/// aria2's reads: a job's status and the lists, in aria2's orders.
extension Aria2Methods {
    /// The job as aria2 shows it (a removed one from the results RPC keeps).
    func download(id: String, keys: [String]) async throws -> Aria2Download {
        guard let job = try await jobs.job(id: id) else {
            if let removed = results.all.first(where: { $0.id == id }) { return Aria2Download(job: removed, removed: true) }
            throw Aria2Failure.notFound(Aria2GID.of(jobID: id))
        }
        return await withPieces(Aria2Download(job: job), keys: keys)
    }

    /// The download with its written ranges, read only when `keys` asks for the piece map
    /// and only for a live job of known size (a completed one is whole, a failed one shows
    /// none).
    func withPieces(_ download: Aria2Download, keys: [String]) async -> Aria2Download {
        guard keys.isEmpty || keys.contains("bitfield"), download.job.state.isLive, download.job.bytesTotal != nil else {
            return download
        }
        var download = download
        download.written = Aria2Pieces.written((try? await jobs.segments(id: download.job.id)) ?? [])
        return download
    }

    func statuses(_ downloads: [Aria2Download], keys: [String]) async throws -> JSONValue {
        var shown: [JSONValue] = []
        for download in downloads {
            shown.append(await withPieces(download, keys: keys).status(documents: documents, keys: keys))
        }
        return .array(shown)
    }

    /// The waiting queue in the order it starts jobs: priority, then age.
    func waiting() async throws -> [JobSnapshot] {
        try await jobs.list(states: [.queued, .paused], limit: Self.listLimit, after: nil)
            .sorted { ($0.priority, $1.createdAt) > ($1.priority, $0.createdAt) }
    }

    /// At most this many jobs are read for one `tellWaiting` or `tellStopped`.
    static let listLimit = 10_000

    func tellWaiting(_ call: Aria2Call) async throws -> JSONValue {
        let page = try Self.page(call, of: try await waiting())
        return try await statuses(page.map { Aria2Download(job: $0) }, keys: try call.keys(at: 2))
    }

    func tellStopped(_ call: Aria2Call) async throws -> JSONValue {
        // Oldest first, as aria2 lists results.
        let finished = try await jobs.list(states: JobState.finished, limit: Self.listLimit, after: nil).reversed()
            .map { Aria2Download(job: $0) }
        let removed = results.all.map { Aria2Download(job: $0, removed: true) }
        let stopped = (finished + removed).sorted { $0.job.updatedAt < $1.job.updatedAt }
        return try await statuses(try Self.page(call, of: stopped), keys: try call.keys(at: 2))
    }

    /// aria2's `offset, num`: from the start, or with a negative offset from the end,
    /// listed backwards (`Aria2Page`).
    static func page<T>(_ call: Aria2Call, of items: [T]) throws -> [T] {
        guard let offset = try call.integer(at: 0, "offset"), let count = try call.count(at: 1, "num") else {
            throw Aria2Failure("offset and num are required")
        }
        return Aria2Page.indices(offset: offset, num: count, count: items.count).map { items[$0] }
    }

    func servers(_ call: Aria2Call) async throws -> JSONValue {
        let download = try await download(id: try call.jobID(at: 0).id, keys: ["gid"])
        guard download.job.state == .running else { throw Aria2Failure("GID#\(download.gid) is not active") }
        let uri = JSONValue.string(URLCredentials.redacted(download.job.url))
        return .array([
            .object([
                ("index", .string("1")),
                (
                    "servers",
                    .array([
                        .object([
                            ("uri", uri), ("currentUri", uri),
                            ("downloadSpeed", .string(String(Int64(max(0, download.job.speed.rounded()))))),
                        ])
                    ])
                ),
            ])
        ])
    }

    func globalStat() async throws -> JSONValue {
        let counts = await jobs.countsByState()
        let active = try await jobs.list(states: [.running], limit: 1000, after: nil)
        let speed = active.reduce(0.0) { $0 + $1.speed }
        let stopped = (counts[.completed] ?? 0) + (counts[.failed] ?? 0) + results.all.count
        return .object([
            ("downloadSpeed", .string(String(Int64(max(0, speed.rounded()))))),
            ("uploadSpeed", .string("0")),
            ("numActive", .string(String(counts[.running] ?? 0))),
            ("numWaiting", .string(String((counts[.queued] ?? 0) + (counts[.paused] ?? 0)))),
            ("numStopped", .string(String(stopped))),
            ("numStoppedTotal", .string(String(stopped))),
        ])
    }

}
