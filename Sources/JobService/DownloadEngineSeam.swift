public import DownloadEngine
public import Logging
public import SluiceCore

/// What the runner asks of a download engine: a run for a job, which it starts, reads the
/// events of, and stops by cancelling its task. The real one is `Download` on the `Fetcher`
/// (`FetcherEngine`); tests give the runner a scripted one on a manual clock.
public protocol RunEngine: Sendable {
    func makeRun(_ request: RunRequest) -> any DownloadRun
}

/// Everything a run of a job needs: what to fetch, where to put it, how, and where its
/// checkpoints go.
public struct RunRequest: Sendable {
    public var url: String
    public var target: DownloadTarget
    public var options: DownloadOptions
    public var checkpoints: any CheckpointStore
    public var logger: Logger
}

/// One run of a download as the runner sees it.
public protocol DownloadRun: Sendable {
    /// Progress, retries and checkpoints as they happen; finishes when the run ends.
    var events: AsyncStream<DownloadEvent> { get }
    /// Runs to the placed file, or throws why not (a cancellation when stopped).
    func run() async throws -> DownloadResult
    /// Which parts of the file are on disk and which are being fetched, now.
    func segments() -> [JobSegment]
    /// Whether the run is past its last point of return (placing its file): a stop no
    /// longer stops it.
    var isCommitted: Bool { get }
    /// The bytes its last stored checkpoint covers (the one it started from, until it
    /// stores one); nil when none is known. A stopped run hands this back: a pause takes it
    /// without reading the store.
    var checkpointedBytes: Int64? { get }
}

/// The real engine: a `Download` on the service's `Fetcher`.
public struct FetcherEngine: RunEngine {
    let client: Fetcher

    public init(client: Fetcher) { self.client = client }

    public func makeRun(_ request: RunRequest) -> any DownloadRun {
        // With mirrors, sources take the lead in turn when the one before fails; without a
        // digest to check bytes against, a source is used alone (no other mirrors beside it).
        if !request.options.mirrors.isEmpty {
            var options = request.options
            let sources = [request.url] + request.options.mirrors
            let spread = options.expectedChecksum != nil
            // The job's credentials stay with the job's URL's origin.
            options.credentialsOrigin = URLCredentials.split(request.url).url
            return MirroredDownload(
                sources: sources, checkpoints: request.checkpoints, neverRun: request.options.neverRun, logger: request.logger
            ) { [client, options] url, handoff in
                var attempt = options
                attempt.neverRun = handoff.neverRun
                attempt.agreeWith = handoff.agreement
                // The checksum file was read (and its signature checked) for an earlier source.
                if let checksum = handoff.checksum { attempt.expectedChecksum = checksum }
                attempt.mirrors = spread ? sources.filter { $0 != url } : []
                return Download(
                    url: url, target: request.target, options: attempt, client: client, checkpoints: request.checkpoints,
                    logger: request.logger)
            }
        }
        return Download(
            url: request.url, target: request.target, options: request.options, client: client,
            checkpoints: request.checkpoints, logger: request.logger
        )
    }
}

extension Download: DownloadRun {}
extension MirroredDownload: DownloadRun {}
