import DownloadEngine
import Foundation
import Logging
import ServiceLifecycle
import SluiceCore

/// What other nodes changed, read back: at once when the store notifies, every second
/// otherwise, and in full every 30 s and after a reconnect (`ClusterSignal.resync`).
///
/// The reads run on the runner's actor (each absorbs into its table), awaiting the store
/// while the runner goes on; which rows a read takes is `ChangeFeedRead`'s rule.
struct ClusterChangeFeed: Service, CustomStringConvertible {
    var description: String { "ClusterChangeFeed" }
    let scheduler: JobScheduler
    let signals: AsyncStream<ClusterSignal>

    func run() async throws {
        await cancelWhenGracefulShutdown { [scheduler, signals] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await signal in signals { await Self.synchronize(full: signal == .resync, on: scheduler) }
                }
                group.addTask {
                    var lastFull = ContinuousClock.now
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(1))
                        guard !Task.isCancelled else { return }
                        let full = ContinuousClock.now - lastFull >= .seconds(30)
                        if full { lastFull = .now }
                        await Self.synchronize(full: full, on: scheduler)
                    }
                }
                await group.waitForAll()
            }
        }
    }

    /// Reads what changed since the last read (everything when `full`) and absorbs it.
    ///
    /// One read at a time (a later read absorbed before an earlier one would be taken back
    /// by it; asks meanwhile are folded into one more read). A row this node wrote again
    /// during a read is not taken from it: it is read again on its own at the next read, and
    /// the cursor moves on.
    static func synchronize(full: Bool, on node: isolated JobScheduler) async {
        guard node.cluster != nil, node.storeAnswers, !node.isShuttingDown else { return }
        guard !node.book.synchronizing else {
            node.book.syncAgain = true
            node.book.syncAgainFull = node.book.syncAgainFull || full
            return
        }
        node.book.synchronizing = true
        var full = full
        while true {
            await readChanges(full: full, on: node)
            guard node.book.syncAgain, !node.isShuttingDown else { break }
            full = node.book.syncAgainFull
            node.book.syncAgain = false
            node.book.syncAgainFull = false
        }
        node.book.synchronizing = false
    }

    private static func readChanges(full: Bool, on node: isolated JobScheduler) async {
        guard let cluster = node.cluster, node.storeAnswers, !Task.isCancelled else { return }
        let since = full ? nil : node.book.cursor
        let read = ChangeFeedRead(writesBefore: node.book.writeCount)
        let recheck = Array(node.book.toRecheck)
        node.book.toRecheck = []
        let countsMark = node.book.storedCounts.readStart
        let changes: ClusterChanges
        let rechecked: [(id: String, row: JobSnapshot?)]
        do {
            changes = try await cluster.changes(since: since)
            var rows: [(id: String, row: JobSnapshot?)] = []
            for id in recheck { rows.append((id, try await cluster.job(id: id))) }
            rechecked = rows
            // What live rows wait for and this node does not know: read before they are
            // absorbed (unknown, a dependency would look deleted).
            let live = (changes.jobs + rechecked.compactMap(\.row)).filter(\.state.isLive)
            try await DependencyStates.read(Set(live.flatMap(\.after)), on: node)
        } catch {
            node.book.toRecheck.formUnion(recheck)
            node.logger.warning("cannot read the cluster's changes: \(error)")
            return
        }
        absorb(changes, rechecked: rechecked, read: read, countsMark: countsMark, on: node)
    }

    private static func absorb(
        _ changes: ClusterChanges, rechecked: [(id: String, row: JobSnapshot?)], read: ChangeFeedRead, countsMark: Int,
        on node: isolated JobScheduler
    ) {
        let newer = { (id: String) in
            read.isNewer(
                lastWrite: node.book.controlWrites[id], unrecorded: node.book.unrecordedRuns[id] != nil, holds: node.runs[id].holds)
        }
        node.book.cursor = changes.cursor
        // One read at a time: nothing older than this read's start is needed any more.
        if node.book.controlWrites.count > ChangeFeedRead.controlWritesKept {
            node.book.controlWrites = node.book.controlWrites.filter { !read.isOlder(lastWrite: $0.value) }
        }
        if let stored = read.settings(changes.settings, current: node.settings, settingsWritten: node.book.settingsWritten) {
            node.settings = stored
            ScheduleCommand.applyInEffect(on: node)
        }
        // What this read's rows let go, its counts have (one snapshot); rows read again on
        // their own come from another.
        node.book.absorbingRead = true
        for job in changes.jobs {
            if newer(job.id) { node.book.toRecheck.insert(job.id) } else { node.absorb(job) }
        }
        node.book.absorbingRead = false
        for (id, row) in rechecked {
            switch ChangeFeedRead.rechecked(row: row, held: node.jobs[id] != nil, newer: newer(id)) {
            case .recheck: node.book.toRecheck.insert(id)
            case .absorb(let row): node.absorb(row)
            case .remove: node.absorbRemoval(id)
            case .nothing: break
            }
        }
        for id in changes.removed {
            switch ChangeFeedRead.removal(held: node.jobs[id] != nil, newer: newer(id)) {
            case .forget:
                // A finished job held by no one here: only its state, if a live job waited for
                // it; streams are told once.
                node.finishedDependencies[id] = nil
                if node.book.shownEnds.isNewRemoval(id) { node.events.publish(.removed(id: id)) }
            case .recheck:
                node.book.toRecheck.insert(id)
            case .remove:
                node.absorbRemoval(id)
            }
        }
        if changes.isFull {
            let absent = ChangeFeedRead.absentFromFullRead(
                present: Set(changes.jobs.map(\.id)), held: node.order.map { ($0, node.jobs[$0]?.state.isLive == true) })
            if !absent.isEmpty {
                node.book.toRecheck.formUnion(absent)
                node.book.syncAgain = true
            }
        }
        node.jobs.setStoredOnly(
            node.book.storedCounts.counts(
                store: changes.counts, held: node.jobs.heldCounts(), mark: countsMark,
                rows: Dictionary(changes.jobs.map { ($0.id, $0.state) }, uniquingKeysWith: { $1 }), removed: Set(changes.removed)
            )
        )
        // Past the reads' overlap, a finished row shown is not seen again unless it changed.
        node.book.shownEnds.forgetOld()
        node.schedule()
        node.scheduleWakeUp()
    }
}

/// The change feed's rules for one read: which of its rows this node takes, which it reads
/// again on their own, which removals it applies.
struct ChangeFeedRead: Equatable {
    /// This node's count of control writes when the read began (`ClusterBook.writeCount`).
    let writesBefore: Int

    /// Past this many, the marks of writes older than a read's start are dropped.
    static let controlWritesKept = 10_000

    /// Whether this node's copy of a job is newer than the read's row: written after the read
    /// began, a run's end not recorded yet, or held by a command (its store calls are
    /// awaited: the command reads what it needs itself). Such a row is read again at the
    /// next read, not taken from this one.
    func isNewer(lastWrite: Int?, unrecorded: Bool, holds: Int) -> Bool {
        !isOlder(lastWrite: lastWrite) || unrecorded || holds > 0
    }

    /// Whether a control write is older than the read (a read that began after it saw it).
    func isOlder(lastWrite: Int?) -> Bool { (lastWrite ?? 0) <= writesBefore }

    /// The queue's settings the read brings, if they are to be taken: changed, and not
    /// written by this node after the read began.
    func settings(_ stored: QueueSettings?, current: QueueSettings, settingsWritten: Int) -> QueueSettings? {
        guard let stored, stored != current, settingsWritten <= writesBefore else { return nil }
        return stored
    }

    enum Recheck: Equatable {
        case recheck
        case absorb(JobSnapshot)
        case remove, nothing
    }

    /// A job read again on its own: its row taken, its absence a removal (when held), or read
    /// again once more when this node's copy is newer.
    static func rechecked(row: JobSnapshot?, held: Bool, newer: Bool) -> Recheck {
        if newer { return .recheck }
        if let row { return .absorb(row) }
        return held ? .remove : .nothing
    }

    enum Removal: Equatable {
        /// Held by no one here: its state forgotten, the streams told once.
        case forget
        case recheck
        case remove
    }

    static func removal(held: Bool, newer: Bool) -> Removal {
        guard held else { return .forget }
        return newer ? .recheck : .remove
    }

    /// A full read has the live jobs only: those held here live but absent from it have
    /// finished or gone, which their own rows tell (read again at once).
    static func absentFromFullRead(present: Set<String>, held: [(id: String, live: Bool)]) -> [String] {
        held.filter { $0.live && !present.contains($0.id) }.map(\.id)
    }
}
