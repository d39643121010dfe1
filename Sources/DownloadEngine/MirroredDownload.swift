public import Logging
public import SluiceCore
import Synchronization

/// A download with mirrors and no digest to check their bytes against (CONTRACT.md §8):
/// the sources are tried one at a time, the primary first, and a move to the next starts the
/// file over from byte 0, so that no file is ever made of two servers' bytes without a
/// digest to prove them the same. A source is given up on (`failed`) when its download fails
/// for the remote's reasons (a status, the network, TLS, a bad answer); a pause, a full disk
/// or a wait the remote asked for are the job's, and end the run as they would without
/// mirrors. A run starts on the source its checkpoint is for, so a resume stays on it.
public final class MirroredDownload: Sendable {
    /// What a source's download starts from: whether the job never ran, what the first source
    /// that answered said of the file, and the digest a checksum file gave an earlier source's
    /// download (read once per run, not once per source).
    public struct Handoff: Sendable {
        public var neverRun: Bool
        public var agreement: SourceAgreement?
        public var checksum: Checksum?
    }

    let sources: [String]
    let make: @Sendable (_ url: String, _ handoff: Handoff) -> Download
    let checkpoints: any CheckpointStore
    let neverRun: Bool
    let logger: Logger
    public let events: AsyncStream<DownloadEvent>
    private let reporter: AsyncStream<DownloadEvent>.Continuation
    private let current = Mutex<Download?>(nil)
    private let table: Mutex<[SourceState]>

    public init(
        sources: [String], checkpoints: any CheckpointStore, neverRun: Bool, logger: Logger,
        make: @escaping @Sendable (_ url: String, _ handoff: Handoff) -> Download
    ) {
        self.sources = sources
        self.make = make
        self.checkpoints = checkpoints
        self.neverRun = neverRun
        self.logger = logger
        self.table = Mutex(sources.map { SourceState(url: $0) })
        (events, reporter) = AsyncStream.makeStream(of: DownloadEvent.self, bufferingPolicy: .bufferingNewest(8))
    }

    /// Whether `error` is the source's fault, so the next one may do better.
    public static func isSourceFailure(_ error: any Error) -> Bool {
        guard let error = error as? SluiceError else { return false }
        let codes: Set<SluiceError.Code> = [
            .httpStatus, .network, .tls, .tooManyRedirects, .invalidResponse, .forbiddenTarget, .invalidURL, .remoteChanged,
        ]
        return codes.contains(error.code)
    }

    public func run() async throws -> DownloadResult {
        defer { reporter.finish() }
        // The source the stored checkpoint's bytes came from, when there is one.
        let stored = neverRun ? nil : try? await checkpoints.load()
        let first = sources.firstIndex { URLCredentials.split($0).url == stored?.url } ?? 0
        var index = first
        var handoff = Handoff(neverRun: neverRun, agreement: nil, checksum: nil)
        while true {
            try Task.checkCancellation()
            let download = make(sources[index], handoff)
            handoff.neverRun = false
            current.withLock { $0 = download }
            let forwarding = Task { [index] in
                for await event in download.events {
                    guard case .progress(var progress) = event else {
                        reporter.yield(event)
                        continue
                    }
                    progress.sources = table.withLock { table in
                        if let spread = progress.sources {
                            // The lead source spreads its connections: each source's own count.
                            for source in spread {
                                guard let at = table.firstIndex(where: { $0.url == source.url }) else { continue }
                                table[at].bytes = source.bytes
                                if source.state != .ok { table[at].state = source.state }
                            }
                        } else {
                            table[index].bytes = progress.bytesDone
                        }
                        return table
                    }
                    reporter.yield(.progress(progress))
                }
            }
            do {
                let result = try await download.run()
                await forwarding.value
                return result
            } catch {
                await forwarding.value
                let next = (index + 1) % sources.count
                let disagrees = error is SourceDisagrees
                guard disagrees || Self.isSourceFailure(error), next != first else {
                    throw (error as? SourceDisagrees).map { SluiceError(.invalidResponse, "no source serves the file: \($0.reason)") }
                        ?? error
                }
                var progress = download.currentProgress()
                // What the first source that answered said of the file: the next must agree.
                if handoff.agreement == nil, !disagrees, progress.bytesTotal != nil {
                    let finding = progress.integrity
                    handoff.agreement = SourceAgreement(
                        length: progress.bytesTotal, announced: finding?.fromHeaders == true ? finding?.expected : nil)
                }
                if let finding = progress.integrity, finding.source == JobIntegrity.ExpectedSource.checksumURL {
                    handoff.checksum = finding.expected
                }
                let failed = table.withLock { table in
                    table[index].failures += 1
                    table[index].state = disagrees ? .excluded : .failed
                    table[next].bytes = 0
                    return table
                }
                logger.warning(
                    "source \(index + 1) of \(sources.count) is not used (\(error)); starting over from byte 0 on the next",
                    metadata: ["url": "\(URLCredentials.redacted(sources[next]))"])
                progress.bytesDone = 0
                progress.sources = failed
                reporter.yield(.progress(progress))
                index = next
            }
        }
    }

    public func segments() -> [JobSegment] { current.withLock { $0 }?.segments() ?? [] }
    public var isCommitted: Bool { current.withLock { $0 }?.isCommitted ?? false }
    public var checkpointedBytes: Int64? { current.withLock { $0 }?.checkpointedBytes }
}
