public import SluiceCore

/// How many finished jobs a cluster node counts as the store's (held by no one here).
///
/// Other nodes finish and remove jobs too, so the counts come from the store, read with each
/// read of the change feed: the store's finished jobs less those this node still holds. A
/// change this node made itself (it let a job go once its end was stored, or removed a
/// finished one) is kept here until a read has it: a read begun after the change was made
/// has it (the change was stored first); one under way when it was made has it exactly when
/// its changed rows (or its removals) have the job, all read in one snapshot with the counts.
public struct StoredFinishedCounts: Sendable, Equatable {
    public struct Change: Sendable, Equatable {
        /// The job's finished state when the change was made.
        public var state: JobState
        /// Removed from the store (else let go by this node, its state stored).
        public var removed: Bool
        /// The mark when it was made: a read begun earlier may not have it.
        public var mark: Int
    }

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

    /// The mark of a read about to start.
    public var readStart: Int { mark }

    /// The finished jobs to count as the store's after a read begun at `mark`: `store` its
    /// counts, `held` this node's table's counts, `rows` the states of the rows it read as
    /// changed, `removed` the removals it read.
    public mutating func counts(
        store: [JobState: Int], held: [JobState: Int], mark readMark: Int, rows: [String: JobState], removed: Set<String>
    ) -> [JobState: Int] {
        var counts = Dictionary(uniqueKeysWithValues: JobState.finished.map { ($0, (store[$0] ?? 0) - (held[$0] ?? 0)) })
        for (id, change) in changes {
            // Made before the read began: the read has it.
            let has = change.mark <= readMark || (change.removed ? removed.contains(id) : rows[id] == change.state)
            if has {
                changes[id] = nil
            } else {
                counts[change.state, default: 0] += change.removed ? -1 : 1
            }
        }
        return counts.mapValues { max(0, $0) }
    }
}
