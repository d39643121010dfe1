public import SluiceCore

/// How many finished jobs a cluster node counts as the store's (held by no one here).
///
/// Other nodes finish and remove jobs too, so the counts come from the store, read with each
/// read of the change feed: the store's finished jobs less those this node still holds. A
/// read's snapshot may be older than this node's own last changes (it let a job go once its
/// end was stored, or removed a finished one), and would take them back for a second; so each
/// such change is kept here until a read has seen it. A read asks the store for the states of
/// the jobs kept here, in the same snapshot as its counts, and tells which of them it saw.
public struct StoredFinishedCounts: Sendable, Equatable {
    public struct Change: Sendable, Equatable {
        /// The job's finished state when the change was made.
        public var state: JobState
        /// Removed from the store (else let go by this node, its state stored).
        public var removed: Bool
        /// The mark when it was made: a read begun earlier may not have seen it.
        public var mark: Int
        /// Reads that did not see it yet; dropped after `patience` of them.
        public var unseenReads = 0
    }

    /// A change no read has seen after this many is dropped (a job changed again elsewhere).
    public static let patience = 10

    public private(set) var changes: [String: Change] = [:]
    private var mark = 0

    public init() {}

    /// A finished job left the table: its state is stored by this node's own write.
    public mutating func letGo(_ id: String, state: JobState) {
        mark += 1
        changes[id] = Change(state: state, removed: false, mark: mark)
    }

    /// A finished job was removed from the store by this node.
    public mutating func removed(_ id: String, state: JobState) {
        mark += 1
        changes[id] = Change(state: state, removed: true, mark: mark)
    }

    /// What a read about to start asks the store about, and its mark.
    public var readStart: (watched: [String], mark: Int) { (Array(changes.keys), mark) }

    /// The finished jobs to count as the store's after a read begun at `mark`: `store` its
    /// counts, `held` this node's table's counts, `seen` the states it read of the watched jobs
    /// (a job absent has no row); `rows` the states of the rows it read as changed and
    /// `removed` the removals, all in the same snapshot.
    public mutating func counts(
        store: [JobState: Int], held: [JobState: Int], seen: [String: JobState], mark readMark: Int,
        rows: [String: JobState] = [:], removed: Set<String> = []
    ) -> [JobState: Int] {
        var counts = Dictionary(uniqueKeysWithValues: JobState.finished.map { ($0, (store[$0] ?? 0) - (held[$0] ?? 0)) })
        for (id, change) in changes {
            let seenState = seen[id]
            let unseen: Bool
            if change.mark > readMark {
                // Made while the read was under way, so not watched: the read has it when it
                // has the change itself (a row changed since its cursor, a removal).
                unseen = change.removed ? !removed.contains(id) : rows[id] != change.state
            } else if change.removed {
                // The row still there, as it was: the removal is not in the read.
                unseen = seenState == change.state
            } else {
                // Still live in the read: the end is not in it.
                unseen = seenState?.isLive == true
            }
            guard unseen else {
                changes[id] = nil
                continue
            }
            counts[change.state, default: 0] += change.removed ? -1 : 1
            if change.mark <= readMark {
                changes[id]?.unseenReads += 1
                if change.unseenReads + 1 >= Self.patience { changes[id] = nil }
            }
        }
        return counts.mapValues { max(0, $0) }
    }
}
