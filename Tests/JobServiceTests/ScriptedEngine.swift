import DownloadEngine
import Foundation
import JobService
import SluiceCore
import Synchronization

/// A download engine whose runs do what the test tells them, one step at a time: report
/// progress, store a checkpoint, finish. A stopped run stores a last checkpoint of the bytes
/// it reported, as the real engine does at every stop. No socket, no file.
final class ScriptedEngine: RunEngine {
    private let made = Mutex<[ScriptedRun]>([])
    private let failure = Mutex<SluiceError?>(nil)

    /// Every run made from now on fails at once with `error`, before any step.
    func failRuns(with error: SluiceError?) { failure.withLock { $0 = error } }

    func makeRun(_ request: RunRequest) -> any DownloadRun {
        let run = ScriptedRun(request, failing: failure.withLock { $0 })
        made.withLock { $0.append(run) }
        return run
    }

    /// Every run made so far, oldest first.
    var runs: [ScriptedRun] { made.withLock { $0 } }
}

final class ScriptedRun: DownloadRun {
    enum Step: Sendable {
        case progress(Int64, total: Int64)
        /// Bytes on disk not reported yet (a progress event is at most one per 250 ms).
        case wrote(Int64)
        case checkpoint(Int64, total: Int64)
        /// Past its last point of return (placing its file): a stop no longer stops it; it
        /// waits for `finishCommitted()` alone.
        case commit
        case finish
    }

    let request: RunRequest
    let events: AsyncStream<DownloadEvent>
    private let reporter: AsyncStream<DownloadEvent>.Continuation
    private let steps: AsyncStream<Step>
    private let stepper: AsyncStream<Step>.Continuation
    private let state = Mutex<(bytes: Int64, total: Int64, checkpointed: Int64?, committed: Bool, stopAsked: Bool)>(
        (0, 0, nil, false, false))

    private let failure: SluiceError?

    init(_ request: RunRequest, failing failure: SluiceError? = nil) {
        self.request = request
        self.failure = failure
        (events, reporter) = AsyncStream.makeStream(of: DownloadEvent.self)
        (steps, stepper) = AsyncStream.makeStream(of: Step.self)
    }

    /// Tells the run its next step.
    func step(_ step: Step) { stepper.yield(step) }

    func run() async throws -> DownloadResult {
        defer { reporter.finish() }
        if let failure { throw failure }
        for await step in steps {
            switch step {
            case .progress(let bytes, let total):
                state.withLock {
                    $0.bytes = bytes
                    $0.total = total
                }
                reporter.yield(.progress(DownloadProgress(phase: .downloading, bytesDone: bytes, bytesTotal: total, resumable: true)))
            case .wrote(let bytes):
                state.withLock { $0.bytes = bytes }
            case .checkpoint(let bytes, let total):
                try await save(bytes, total: total)
            case .commit:
                state.withLock { $0.committed = true }
                // A cancellation no longer ends the run: it is noted, and the run goes on.
                await withTaskCancellationHandler {
                    await finishing.passed()
                } onCancel: {
                    state.withLock { $0.stopAsked = true }
                }
                return result()
            case .finish:
                return result()
            }
        }
        // Stopped: the bytes reported so far, checkpointed, as the real engine does.
        let (bytes, total) = state.withLock { ($0.bytes, $0.total) }
        try await save(bytes, total: total)
        throw CancellationError()
    }

    private func result() -> DownloadResult {
        let total = state.withLock { $0.total }
        return DownloadResult(
            path: request.target.partialPath, fileName: "scripted.bin", sha256: String(repeating: "0", count: 64), bytes: total)
    }

    /// Lets a committed run finish (its `finish` step, which a cancelled stream of steps
    /// could not deliver).
    func finishCommitted() { finishing.open() }
    private let finishing = Gate()

    private func save(_ bytes: Int64, total: Int64) async throws {
        let checkpoint = DownloadCheckpoint(
            url: request.url, totalBytes: total, acceptsRanges: true, written: bytes > 0 ? [0..<bytes] : []
        )
        try await request.checkpoints.save(checkpoint)
        state.withLock { $0.checkpointed = bytes }
    }

    func segments() -> [JobSegment] { [] }
    var isCommitted: Bool { state.withLock { $0.committed } }
    /// Whether the runner stopped the run (cancelled its task) after it committed.
    var stopAsked: Bool { state.withLock { $0.stopAsked } }
    var checkpointedBytes: Int64? { state.withLock { $0.checkpointed } }
}
