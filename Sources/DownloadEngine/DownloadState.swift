import Crypto
import SluiceCore
import Synchronization

/// What the workers, the monitor and the caller of one download share, behind one lock.
/// Every critical section is a few field updates: no I/O happens while it is held.
final class DownloadState: Sendable {
    struct Remote: Sendable {
        var totalBytes: Int64?
        var acceptsRanges: Bool
        var validators: Validators?
        var finalURL: String?
        var fileName: String?
        /// The SHA-256 (lowercase hex) the remote announced in `Repr-Digest` for the bytes
        /// being fetched: from the probe, a checkpoint, or the latest whole-file answer.
        var announcedSHA256: String? = nil
    }

    /// Where one connection's requests go: the primary (lane 0, with `Remote`'s URL and
    /// validators) or a mirror that agreed with it.
    struct Lane: Sendable {
        var url: String
        var validators: Validators?
        /// The source's index in `sources`.
        var source: Int
    }

    private struct Inner {
        /// The mirrors' lanes after the primary's; empty without mirrors in use.
        var lanes: [Lane] = []
        /// Mirrors the probe's answer named (`Link: rel=duplicate`, with an instance digest).
        var linkedMirrors: [String] = []
        /// What each source did, when the download has mirrors.
        var sources: [SourceState]?
        var remote: Remote?
        /// Range mode: the segment map.
        var map: SegmentMap?
        /// Single-stream mode: bytes on disk from offset 0.
        var streamed: Int64 = 0
        var phase: DownloadProgress.Phase = .probing
        var activeConnections = 0
        /// This run truncated the partial file and started from byte 0: what it wrote is its
        /// own, and may be thrown away when it cannot be resumed.
        var startedFromZero = false
        /// Past the run's last point of return: the file is being placed (or is), and a
        /// stop no longer changes the outcome.
        var committed = false
        /// The bytes the last stored checkpoint covers: the one the run started from, then
        /// each it stored; nil when there is none (or it was removed).
        var checkpointedBytes: Int64?
        /// What the run learnt of the digest the file must have (a checksum file's entry).
        var integrity: IntegrityFinding?
        /// The file's own detached signature, fetched before its first byte, checked before
        /// it is placed.
        var fileSignature: [UInt8]?
        /// The hasher, waiting for the prefix on disk to reach a length.
        var prefixWaiter: (length: Int64, continuation: CheckedContinuation<Void, Never>)?

        var prefix: Int64 { map?.writtenPrefix ?? 0 }

        /// Takes the waiter when the prefix has reached its length.
        mutating func readyWaiter() -> CheckedContinuation<Void, Never>? {
            guard let waiter = prefixWaiter, prefix >= waiter.length else { return nil }
            prefixWaiter = nil
            return waiter.continuation
        }
    }

    private let inner = Mutex(Inner())

    var remote: Remote? { inner.withLock { $0.remote } }

    func setRemote(_ remote: Remote, map: SegmentMap?) {
        inner.withLock {
            $0.remote = remote
            $0.map = map
            $0.streamed = 0
        }
    }

    /// The download starts over from byte 0 (the remote changed): nothing of the old map is
    /// on disk any more. Until the next probe sets a new map, the prefix on disk is 0, so that
    /// the next attempt's hasher cannot read the old map's prefix from a file that now holds
    /// zeros (its reservation) or the new version's first bytes.
    func startOver() {
        inner.withLock {
            $0.map = nil
            $0.streamed = 0
        }
    }

    /// A new whole-file answer (a single stream starting over) announces its own digest.
    func setAnnouncedSHA256(_ digest: String?) {
        inner.withLock { $0.remote?.announcedSHA256 = digest }
    }

    var linkedMirrors: [String] { inner.withLock { $0.linkedMirrors } }
    func setLinkedMirrors(_ mirrors: [String]) { inner.withLock { $0.linkedMirrors = mirrors } }

    func setSources(_ sources: [SourceState], lanes: [Lane]) {
        inner.withLock {
            $0.sources = sources
            $0.lanes = lanes
        }
    }

    /// How many lanes connections are spread over: the primary's and the mirrors'.
    var laneCount: Int { inner.withLock { 1 + $0.lanes.count } }
    /// Lane `index` (1 and up: the mirrors'), while its source is still used; nil for the
    /// primary's, and for a mirror given up on (its connections go to the primary).
    func lane(_ index: Int) -> Lane? {
        inner.withLock { state in
            guard index > 0, index <= state.lanes.count else { return nil }
            let lane = state.lanes[index - 1]
            return state.sources?[lane.source].state == .ok ? lane : nil
        }
    }

    /// A source given up on, once: the other connections on its lane see the same failure.
    func giveUp(source: Int, as state: SourceState.State) {
        inner.withLock {
            guard $0.sources?.indices.contains(source) == true, $0.sources?[source].state == .ok else { return }
            $0.sources?[source].failures += 1
            $0.sources?[source].state = state
        }
    }

    var integrity: IntegrityFinding? { inner.withLock { $0.integrity } }
    func setIntegrity(_ finding: IntegrityFinding) { inner.withLock { $0.integrity = finding } }
    var fileSignature: [UInt8]? { inner.withLock { $0.fileSignature } }
    func setFileSignature(_ signature: [UInt8]) { inner.withLock { $0.fileSignature = signature } }

    var startedFromZero: Bool { inner.withLock { $0.startedFromZero } }
    func markStartedFromZero() { inner.withLock { $0.startedFromZero = true } }

    func setPhase(_ phase: DownloadProgress.Phase) {
        inner.withLock { $0.phase = phase }
    }

    var committed: Bool { inner.withLock { $0.committed } }
    func commit() { inner.withLock { $0.committed = true } }

    var checkpointedBytes: Int64? { inner.withLock { $0.checkpointedBytes } }
    func setCheckpointedBytes(_ bytes: Int64?) { inner.withLock { $0.checkpointedBytes = bytes } }

    func connectionOpened() { inner.withLock { $0.activeConnections += 1 } }
    func connectionClosed() { inner.withLock { $0.activeConnections -= 1 } }

    // MARK: Range mode

    func claim() -> SegmentMap.Claim? {
        inner.withLock { $0.map?.claim() }
    }

    /// The range still to fetch for a claimed segment.
    func remainingRange(of segment: Int) -> Range<Int64>? {
        inner.withLock { state in
            guard let current = state.map?.segment(segment) else { return nil }
            return current.next..<current.end
        }
    }

    /// Reserves up to `count` bytes of a segment; returns where to write them and how many.
    func reserve(_ count: Int64, segment: Int) -> (offset: Int64, count: Int64) {
        inner.withLock { state in
            let offset = state.map!.segment(segment)!.next
            return (offset, state.map!.reserve(count, segment: segment))
        }
    }

    /// The bytes reserved in `segment` are on disk: `count` of them from source `source`
    /// (counted when the download has mirrors), in the same turn of the lock.
    func commit(segment: Int, count: Int64, source: Int) {
        let waiter = inner.withLock { state in
            state.map!.commit(segment: segment)
            if state.sources != nil { state.sources![source].bytes += count }
            return state.readyWaiter()
        }
        waiter?.resume()
    }
    func abandon(segment: Int) { inner.withLock { $0.map!.abandon(segment: segment) } }
    func release(segment: Int) { inner.withLock { $0.map?.release(segment: segment) } }

    func isFinished(segment: Int) -> Bool {
        inner.withLock { $0.map?.segment(segment)?.isFinished ?? true }
    }

    // MARK: Single-stream mode

    func streamedBytes(_ total: Int64) { inner.withLock { $0.streamed = total } }

    // MARK: Snapshots

    /// Bytes on disk (committed), whichever the mode.
    var bytesDone: Int64 {
        inner.withLock { $0.map?.writtenBytes ?? $0.streamed }
    }

    /// How far the file is on disk without a gap from byte 0 (range mode; 0 otherwise,
    /// where the single stream hashes itself).
    var contiguousPrefix: Int64 {
        inner.withLock { $0.prefix }
    }

    /// Returns once the prefix on disk is at least `length` bytes long, or the task is
    /// cancelled. One waiter at a time (the download's hasher); writes wake it, so it
    /// neither polls nor sleeps longer than it must.
    func waitForPrefix(_ length: Int64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = inner.withLock { state -> Bool in
                    if Task.isCancelled || state.prefix >= length { return true }
                    state.prefixWaiter = (length, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = inner.withLock { state in
                defer { state.prefixWaiter = nil }
                return state.prefixWaiter?.continuation
            }
            waiter?.resume()
        }
    }

    var isComplete: Bool {
        inner.withLock { $0.map?.isComplete ?? false }
    }

    /// The segments of the file now: the map's, or for a single stream one segment.
    func segments() -> [JobSegment] {
        inner.withLock { state in
            if let map = state.map { return JobSegment.live(map) }
            guard state.remote != nil else { return [] }
            let total = state.remote?.totalBytes ?? state.streamed
            return [JobSegment(start: 0, end: max(total, state.streamed), done: state.streamed, active: state.phase == .downloading)]
        }
    }

    /// The checkpoint that describes what is on disk now. Taken before the `fsync` that
    /// precedes saving it, so it never claims bytes the sync does not cover.
    func checkpoint(url: String) -> DownloadCheckpoint? {
        inner.withLock { state in
            guard let remote = state.remote else { return nil }
            let written = state.map?.writtenRanges ?? []
            return DownloadCheckpoint(
                url: url, finalURL: remote.finalURL, validators: remote.validators, totalBytes: remote.totalBytes,
                acceptsRanges: remote.acceptsRanges && state.map != nil, written: written, fileName: remote.fileName,
                announcedSHA256: remote.announcedSHA256
            )
        }
    }

    func progress(speed: inout SpeedMeter, now: Double) -> DownloadProgress {
        inner.withLock { state in
            let done = state.map?.writtenBytes ?? state.streamed
            speed.record(bytes: done, at: now)
            let total = state.remote?.totalBytes
            var progress = DownloadProgress(
                phase: state.phase, bytesDone: done, bytesTotal: total, speed: speed.bytesPerSecond,
                eta: speed.eta(remaining: total.map { $0 - done }),
                resumable: state.map != nil && state.remote?.validators?.ifRangeValue != nil,
                fileName: state.remote?.fileName, activeConnections: state.activeConnections, integrity: state.integrity
            )
            progress.sources = state.sources
            return progress
        }
    }
}
