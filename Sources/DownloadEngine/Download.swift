import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOPosix
public import SluiceCore
import NIOHTTP1

/// One download, from the first request to the verified file in its place.
///
/// `run()` probes the server, splits the file between Range connections when it can, streams
/// every response straight to its offset in the partial file, checkpoints what is on disk,
/// retries what fails, starts over when the remote file changed, verifies the SHA-256 and
/// moves the file into place. Cancel the task running it to pause: it checkpoints first.
public final class Download: Sendable {
    public let url: String
    let target: DownloadTarget
    let options: DownloadOptions
    let client: Fetcher
    let store: any CheckpointStore
    /// Progress and checkpoints, for the owner of the download (the job service, the
    /// command line's progress bar): one stream, consumed by one reader, ended when `run()`
    /// returns. Only the newest events are kept when the reader falls behind.
    public let events: AsyncStream<DownloadEvent>
    let reporter: AsyncStream<DownloadEvent>.Continuation
    let logger: Logger
    let state = DownloadState()
    /// When this download was made (its run starts right after), on its clock.
    let createdAt: Duration
    /// The data-plane loop this download runs on (its first connection, the probe, the
    /// single stream); further connections take the next loops.
    let home = DataPlane.nextExecutor()

    public init(
        url: String, target: DownloadTarget, options: DownloadOptions, client: Fetcher,
        checkpoints: any CheckpointStore, logger: Logger = Logger(label: "sluice.download")
    ) {
        // User information in the URL is sent as `Basic` credentials, as curl sends it, and
        // kept out of the requests' URL and the logs; a job's own `Authorization` wins. The
        // engine sends `Authorization` to the URL's origin only.
        let (plain, authorization) = URLCredentials.split(url)
        var options = options
        if let authorization, !options.headers.keys.contains(where: { $0.lowercased() == "authorization" }) {
            options.headers["Authorization"] = authorization
        }
        self.url = plain
        self.target = target
        self.options = options
        self.createdAt = options.clock.elapsed()
        self.client = client
        self.store = checkpoints
        self.logger = logger
        (self.events, self.reporter) = AsyncStream.makeStream(of: DownloadEvent.self, bufferingPolicy: .bufferingNewest(8))
    }

    /// Which parts of the file are on disk and which are being fetched, now.
    public func segments() -> [JobSegment] { state.segments() }

    /// The run has passed its last point of return: its file is being placed (or is), so it
    /// ends with its result whatever stops it now, on its store calls' own deadlines.
    public var isCommitted: Bool { state.committed }

    /// The bytes its last stored checkpoint covers: the one it started from, until it stores
    /// one; nil when there is none. A stopped run hands this back, so a pause need not read
    /// the store.
    public var checkpointedBytes: Int64? { state.checkpointedBytes }

    /// The newest progress, computed now.
    public func currentProgress() -> DownloadProgress {
        var meter = SpeedMeter()
        return state.progress(speed: &meter, now: 0)
    }

    /// Runs the download to the end. Throws `SluiceError` on failure and
    /// `CancellationError` when cancelled, having saved a checkpoint in both cases.
    public func run() async throws -> DownloadResult {
        defer { reporter.finish() }
        return try await withTaskExecutorPreference(home) {
            try await self.runOnDataPlane()
        }
    }

    private func runOnDataPlane() async throws -> DownloadResult {
        // One read of the store answers both questions; none when there cannot be anything.
        let stored = options.neverRun ? nil : try await store.load()
        if let placed = try await placedByPreviousRun(stored) { return placed }
        if let announced = options.announced { state.setIntegrity(announced) }
        // What the file must be, before its first byte: a checksum file without the entry
        // fails the job having fetched nothing of it.
        try await resolveIntegrity()
        let file = try PartialFile(path: target.partialPath)
        var checkpoint = try verifiedCheckpoint(stored, for: file)
        // What the file still holds of it: a pause before the next save takes no more.
        state.setCheckpointedBytes(checkpoint?.writtenBytes)
        var restarts = RetryMachine(policy: options.retry)
        while true {
            do {
                let resumeFrom = checkpoint
                let hasher = PrefixHasher()
                let hash = try await withMonitor(file: file, hasher: hasher) {
                    try await self.attempt(file: file, resumeFrom: resumeFrom)
                }
                return try await finish(file: file, streamedHash: hash, hasher: hasher)
            } catch let restart as RestartFromZero {
                logger.notice("starting over from byte 0: \(restart.reason)", metadata: ["url": "\(url)"])
                if case .fail(let error) = restarts.handle(.remoteChanged(restart.reason), jitter: 0) { throw error }
                checkpoint = nil
                // The store first: a run that lost its job must not truncate a file that
                // another run may have taken over.
                try await store.remove()
                state.setCheckpointedBytes(nil)
                state.startOver()
                try file.truncate()
            } catch let lost as LeaseLost {
                throw lost
            } catch {
                await saveCheckpoint(file: file)
                if Task.isCancelled { throw CancellationError() }
                // What this run wrote from byte 0 and cannot be resumed is worth nothing: free
                // its space (after a full disk, especially). Bytes it did not write itself (a
                // checkpointed prefix, or a file `-c` was asked to continue) are never touched.
                if state.startedFromZero, !(state.checkpoint(url: url)?.isResumable ?? false) {
                    if (try? await store.remove()) != nil {
                        state.setCheckpointedBytes(nil)
                        try? file.truncate()
                    }
                }
                throw error
            }
        }
    }

    /// The stored checkpoint, if it is for this URL, resumable, and its ranges are still
    /// in the partial file on disk (a missing or shorter file drops what it no longer holds).
    private func verifiedCheckpoint(_ stored: DownloadCheckpoint?, for file: PartialFile) throws -> DownloadCheckpoint? {
        guard var checkpoint = stored, checkpoint.url == url, checkpoint.isResumable else {
            return nil
        }
        let size = try file.size()
        checkpoint.written = checkpoint.written.compactMap { range in
            let end = min(range.end, size)
            return end > range.start ? DownloadCheckpoint.WrittenRange(range.start..<end) : nil
        }
        return checkpoint
    }

    /// Runs `body` while a monitor task publishes progress and saves checkpoints, and a
    /// hasher follows the prefix of the file that is on disk.
    private func withMonitor<T: Sendable>(
        file: PartialFile, hasher: PrefixHasher, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            // Progress and checkpoints are control work: on the shared pool at the process's
            // own priority, so a busy (or deprioritised) data plane never delays a checkpoint
            // and makes a crash cost more.
            group.addTask(executorPreference: globalConcurrentExecutor) {
                await self.monitor(file: file)
                return nil
            }
            group.addTask {
                await hasher.follow(file: file, state: self.state)
                return nil
            }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// A progress event every `progressInterval` and a checkpoint every
    /// `checkpointInterval` while bytes flow. What it measures (speed, the time since the last
    /// checkpoint) is on the download's clock; its ticks are real time, a poll: on a clock
    /// whose every wait returns at once (`VirtualClock`) a loop that slept on it would spin
    /// and move that clock for everyone.
    private func monitor(file: PartialFile) async {
        let ticks = ContinuousClock()
        let clock = options.clock
        let start = clock.elapsed()
        var meter = SpeedMeter()
        var lastCheckpoint = start
        while !Task.isCancelled {
            try? await ticks.sleep(for: .seconds(options.progressInterval))
            if Task.isCancelled { break }
            let now = clock.elapsed()
            reporter.yield(.progress(state.progress(speed: &meter, now: (now - start) / .seconds(1))))
            if now - lastCheckpoint >= .seconds(options.checkpointInterval) {
                lastCheckpoint = now
                await saveCheckpoint(file: file)
            }
        }
    }

    /// Snapshot, then `fsync`, then save: the checkpoint never claims unsynced bytes (with
    /// `synced`, the caller synced the file after the last write).
    func saveCheckpoint(file: PartialFile, synced: Bool = false) async {
        guard let checkpoint = state.checkpoint(url: url), checkpoint.acceptsRanges else { return }
        do {
            if !synced { try await Self.sync(file) }
            try await store.save(checkpoint)
            state.setCheckpointedBytes(checkpoint.writtenBytes)
            reporter.yield(.checkpointed(bytes: checkpoint.writtenBytes))
        } catch {
            logger.warning("checkpoint failed: \(error)")
        }
    }

    /// `fsync` can take hundreds of milliseconds: run it on the thread pool, not on the
    /// cooperative pool whose few threads also answer the API. A cancelled task (a pause or
    /// a stop) cannot hand work to the pool, so its one last sync blocks in place.
    static func sync(_ file: PartialFile) async throws {
        if Task.isCancelled {
            try file.sync()
        } else {
            try await NIOThreadPool.singleton.runIfActive { try file.sync() }
        }
    }

    /// Feeds a failure to `machine` and carries out its answer: waits (on the download's
    /// clock) before the next try, or throws what ends this loop.
    func recover(from error: any Error, with machine: inout RetryMachine) async throws {
        let event = Self.event(for: error, target: remoteName, scheme: URLOrigin(url)?.scheme)
        switch machine.handle(event, jitter: Double.random(in: 0...1)) {
        case .retry(let delay):
            if let threshold = options.releaseSlotAfter, delay >= threshold, case .transient(let error, _) = event {
                throw RetryLater(delay: delay, failures: machine.consecutiveFailures, error: error)
            }
            state.setPhase(.retrying)
            let reason: String
            switch event {
            case .transient(let failure, _), .stalled(let failure), .final(let failure): reason = failure.message
            default: reason = "the request failed"
            }
            logger.info("retrying in \(delay): \(reason)", metadata: ["url": "\(URLCredentials.redacted(url))"])
            reporter.yield(.retrying(reason: reason, delay: delay, failures: machine.consecutiveFailures))
            try await options.clock.sleep(delay)
            state.setPhase(.downloading)
        case .fail(let error):
            throw error
        case .restartFromZero(let reason):
            throw RestartFromZero(reason: reason)
        case .stop:
            throw CancellationError()
        case .proceed, .place:
            return
        }
    }

    /// The job URL's `host:port`, as messages name the server.
    var remoteName: String { URLOrigin(url)?.shown ?? "the server" }

    /// What an error thrown while talking to a server means to the retry machine.
    static func event(for error: any Error, target: String, scheme: String? = nil) -> RetryMachine.Event {
        if Task.isCancelled || error is CancellationError { return .cancelled }
        switch error {
        case let decided as MachineEvent:
            return decided.event
        case let restart as RestartFromZero:
            return .remoteChanged(restart.reason)
        case let stall as StallFailure:
            return .stalled(SluiceError(.network, "the connection stalled: \(stall.reason)"))
        case let transient as TransientFailure:
            return .transient(transient.error, retryAfter: transient.retryAfter)
        case let error as HTTPClientError where error == .readTimeout:
            return .stalled(SluiceError(.network, "\(target) stalled: no byte came for the read timeout", cause: error))
        default:
            switch SluiceError.fromTransport(error, target: target, scheme: scheme) {
            case .success(let transient): return .transient(transient.error, retryAfter: transient.retryAfter)
            case .failure(let final): return .final(final)
            }
        }
    }

    /// Throws `StallFailure` when a connection's bytes so far say it is stalled.
    func check(_ watch: inout StallWatch, received count: Int, since start: Duration) throws {
        if let reason = watch.received(count, at: options.clock.elapsed() - start, floor: stallFloor()) {
            throw StallFailure(reason: reason)
        }
    }

    func makeStallWatch() -> StallWatch {
        StallWatch(window: options.stallWindow, floor: stallFloor())
    }

    /// Under a rate limit of the service's own, the floor is lowered to a quarter of each
    /// connection's share, so our own limit never looks like a slow remote. Read at every
    /// closed stall window: the limit can change while the download runs.
    private func stallFloor() -> Int64 {
        var floor = options.minimumRate
        if let rate = options.rateLimiter?.effectiveBytesPerSecond {
            // Compared as doubles: a rate near Int64.max must not trap in a conversion.
            floor = min(floor, Int64(min(Double(floor), rate / Double(4 * options.connections))))
        }
        return floor
    }

    func makeRequest(url: String, range: Range<Int64>?, ifRange: String?) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: "sluice/0.1")
        // Every answer may then say what the whole file's SHA-256 is (RFC 9530).
        request.headers.add(name: "Want-Repr-Digest", value: ReprDigest.wantSHA256)
        for (name, value) in options.headers {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        if let range {
            let last = range.upperBound == Int64.max ? "" : String(range.upperBound - 1)
            request.headers.replaceOrAdd(name: "Range", value: "bytes=\(range.lowerBound)-\(last)")
            if let ifRange { request.headers.replaceOrAdd(name: "If-Range", value: ifRange) }
        }
        return request
    }

    /// Sends a request of this download: its target checked, its credentials kept to the
    /// job URL's origin, redirects followed.
    func execute(_ request: HTTPClientRequest) async throws -> Fetcher.Fetched {
        try await client.execute(
            request, credentialsOrigin: options.credentialsOrigin ?? url, deadline: .now() + .seconds(Int64(options.stallTimeout) + 10),
            logger: logger,
            proxy: options.proxy, insecure: options.insecure
        )
    }
}
