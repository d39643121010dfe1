import JobService
import SluiceCore
import Testing

/// A cluster node's count of the finished jobs it left to the store: the store's, less those
/// held, corrected for this node's own changes a read has not seen yet.
@Suite struct StoredFinishedCountsTests {
    struct Case: CustomTestStringConvertible {
        var name: String
        /// The change this node made: let go (false) or removed (true), and the job's state.
        var removed: Bool
        var state: JobState
        /// Whether the read began after the change (it asked the store about the job).
        var readAfter: Bool
        /// The job's state in the read (nil: no row).
        var seen: JobState?
        /// What the read's completed count becomes (the store says 5, 1 of them held), and
        /// whether the change is kept for the next read.
        var completed: Int
        var kept: Bool
        /// A read begun before the change: the state of the job's row among the rows it read
        /// as changed, and whether it read the job's removal.
        var row: JobState? = nil
        var removal = false
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "let go, read begun before", removed: false, state: .completed, readAfter: false, seen: nil, completed: 5, kept: true),
        Case(name: "let go, read saw it", removed: false, state: .completed, readAfter: true, seen: .completed, completed: 4, kept: false),
        Case(name: "let go, read older", removed: false, state: .completed, readAfter: true, seen: .running, completed: 5, kept: true),
        Case(name: "let go, removed since", removed: false, state: .completed, readAfter: true, seen: nil, completed: 4, kept: false),
        Case(name: "let go, failed", removed: false, state: .failed, readAfter: true, seen: .running, completed: 4, kept: true),
        Case(name: "removed, read begun before", removed: true, state: .completed, readAfter: false, seen: nil, completed: 3, kept: true),
        Case(name: "removed, read older", removed: true, state: .completed, readAfter: true, seen: .completed, completed: 3, kept: true),
        Case(name: "removed, read saw it", removed: true, state: .completed, readAfter: true, seen: nil, completed: 4, kept: false),
        Case(
            name: "let go, read begun before has its row", removed: false, state: .completed, readAfter: false, seen: nil,
            completed: 4, kept: false, row: .completed),
        Case(
            name: "let go, read begun before has an older row", removed: false, state: .completed, readAfter: false, seen: nil,
            completed: 5, kept: true, row: .running),
        Case(
            name: "removed, read begun before has it", removed: true, state: .completed, readAfter: false, seen: nil, completed: 4,
            kept: false, removal: true),
    ]

    @Test(arguments: cases) func aReadCountsWhatItHasNotSeen(_ rule: Case) {
        var counts = StoredFinishedCounts()
        var mark = counts.readStart.mark
        if rule.removed { counts.removed("j", state: rule.state) } else { counts.letGo("j", state: rule.state) }
        if rule.readAfter {
            let start = counts.readStart
            #expect(start.watched == ["j"])
            mark = start.mark
        }
        let seen = rule.seen.map { ["j": $0] } ?? [:]
        let result = counts.counts(
            store: [.completed: 5, .failed: 2], held: [.completed: 1], seen: seen, mark: mark, rows: rule.row.map { ["j": $0] } ?? [:],
            removed: rule.removal ? ["j"] : []
        )
        #expect(result[.completed] == rule.completed)
        #expect((counts.changes["j"] != nil) == rule.kept)
        // The other finished state is the store's alone.
        if rule.state == .completed { #expect(result[.failed] == 2) }
    }

    @Test func aChangeNoReadSeesIsDroppedAfterItsPatienceAndCountsNeverGoNegative() {
        var counts = StoredFinishedCounts()
        counts.letGo("j", state: .completed)
        var reads = 0
        while counts.changes["j"] != nil, reads < 100 {
            let mark = counts.readStart.mark
            _ = counts.counts(store: [:], held: [:], seen: ["j": .queued], mark: mark)
            reads += 1
        }
        #expect(reads == StoredFinishedCounts.patience)
        counts.removed("k", state: .failed)
        let mark = counts.readStart.mark
        #expect(counts.counts(store: [:], held: [.completed: 3], seen: ["k": .failed], mark: mark) == [.completed: 0, .failed: 0])
    }
}
