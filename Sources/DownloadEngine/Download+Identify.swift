import AsyncHTTPClient
import NIOHTTP1
public import SluiceCore

/// What a URL serves, as far as resuming is concerned: its length and strong validator.
public struct RemoteIdentity: Sendable, Equatable {
    public var totalBytes: Int64?
    public var validators: Validators
    /// Where redirects led, when elsewhere.
    public var finalURL: String?

    /// Whether bytes fetched under `checkpoint` are bytes of what this serves: the same
    /// length and the same strong validator (a strong ETag, else a strong date), as an
    /// `If-Range` would find them.
    public func serves(theFileOf checkpoint: DownloadCheckpoint) -> Bool {
        guard let total = totalBytes, total == checkpoint.totalBytes, let old = checkpoint.validators,
            let ifRange = old.ifRangeValue
        else { return false }
        return validators.ifRangeValue == ifRange
    }
}

extension Download {
    /// Asks `url` for its first byte (`Range: bytes=0-0`, one try, redirects followed under
    /// the same rules as a download's): the answer's length and validators say what it
    /// serves. For a job given a new URL, to learn whether its bytes on disk are still good.
    public static func identify(url: String, options: DownloadOptions, client: Fetcher) async throws -> RemoteIdentity {
        let download = Download(
            url: url, target: DownloadTarget(partialPath: "/dev/null", destination: .directory("/nonexistent")),
            options: options, client: client, checkpoints: NoCheckpoints()
        )
        // Under a per-host cap, as a run's probe: one connection to the host, waited for.
        let host = HostConnections.key(for: download.url)
        if let cap = options.hostConnections { try await cap.acquire(host) }
        defer { options.hostConnections?.release(host) }
        return try await withTaskExecutorPreference(download.home) {
            let answer = try await download.askFirstByte(of: download.url)
            guard let identity = answer.identity else {
                throw SluiceError(.httpStatus, "the new URL answered \(answer.status) to a request for its first byte")
            }
            return RemoteIdentity(
                totalBytes: identity.totalBytes, validators: identity.validators, finalURL: answer.finalURL == url ? nil : answer.finalURL
            )
        }
    }

    /// What `url` says it serves when asked for its first byte (`Range: bytes=0-0`, one try,
    /// redirects followed as a download's are), as a new link and a mirror are asked: its
    /// status, head, the URL that answered, and its length and validators (nil unless a 206
    /// for byte 0 with the whole length).
    func askFirstByte(of url: String) async throws -> (
        status: Int, headers: HTTPHeaders, finalURL: String, identity: ResponseCheck.Probe?
    ) {
        let fetched = try await execute(makeRequest(url: url, range: 0..<1, ifRange: nil))
        let response = fetched.response
        _ = try? await response.body.collect(upTo: 1 << 16)
        let status = Int(response.status.code)
        return (status, response.headers, fetched.url, ResponseCheck.identity(status: status, header: { response.headers.first(name: $0) }))
    }
}

/// No checkpoints: for a download that only probes.
struct NoCheckpoints: CheckpointStore {
    func load() async throws -> DownloadCheckpoint? { nil }
    func save(_ checkpoint: DownloadCheckpoint) async throws {}
    func remove() async throws {}
}
