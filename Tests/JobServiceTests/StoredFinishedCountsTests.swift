import JobService
import SluiceCore
import Testing

/// A cluster node's count of the finished jobs it left to the store: the store's, less those
/// held, corrected for this node's own changes a read does not have yet.
@Suite struct StoredFinishedCountsTests {
    struct Case: CustomTestStringConvertible {
        var name: String
        /// The change this node made: let go (false) or removed (true), and the job's state.
        var removed: Bool
        var state: JobState = .completed
        /// Whether the read began after the change.
        var readAfter: Bool
        /// The job's row among the rows the read has as changed, and whether it has the
        /// job's removal.
        var row: JobState? = nil
        var removal = false
        /// What the read's completed count becomes (the store says 5, 1 of them held), and
        /// whether the change is kept for the next read.
        var completed: Int
        var kept: Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "let go, read begun after", removed: false, readAfter: true, completed: 4, kept: false),
        Case(name: "let go, read under way has its row", removed: false, readAfter: false, row: .completed, completed: 4, kept: false),
        Case(name: "let go, read under way has an older row", removed: false, readAfter: false, row: .running, completed: 5, kept: true),
        Case(name: "let go, read under way has no row of it", removed: false, readAfter: false, completed: 5, kept: true),
        Case(name: "let go failed, read under way older", removed: false, state: .failed, readAfter: false, completed: 4, kept: true),
        Case(name: "removed, read begun after", removed: true, readAfter: true, completed: 4, kept: false),
        Case(name: "removed, read under way has it", removed: true, readAfter: false, removal: true, completed: 4, kept: false),
        Case(name: "removed, read under way has it not", removed: true, readAfter: false, completed: 3, kept: true),
    ]

    @Test(arguments: cases) func aReadCountsWhatItDoesNotHave(_ rule: Case) {
        var counts = StoredFinishedCounts()
        var mark = counts.readStart
        if rule.removed { counts.removed("j", state: rule.state) } else { counts.letGo("j", state: rule.state) }
        if rule.readAfter { mark = counts.readStart }
        let result = counts.counts(
            store: [.completed: 5, .failed: 2], held: [.completed: 1], mark: mark, rows: rule.row.map { ["j": $0] } ?? [:],
            removed: rule.removal ? ["j"] : []
        )
        #expect(result[.completed] == rule.completed)
        #expect((counts.changes["j"] != nil) == rule.kept)
        if rule.state == .failed { #expect(result[.failed] == 3) }
    }

    /// A change the read under way did not have is had by the next one, which began after it.
    @Test func theNextReadHasItAndCountsNeverGoNegative() {
        var counts = StoredFinishedCounts()
        let first = counts.readStart
        counts.letGo("j", state: .completed)
        _ = counts.counts(store: [:], held: [:], mark: first, rows: [:], removed: [])
        #expect(counts.changes["j"] != nil)
        let second = counts.readStart
        let next = counts.counts(store: [.completed: 1], held: [:], mark: second, rows: [:], removed: [])
        #expect(next[.completed] == 1 && counts.changes.isEmpty)
        let third = counts.readStart
        counts.removed("k", state: .failed)
        #expect(counts.counts(store: [:], held: [.completed: 3], mark: third, rows: [:], removed: []) == [.completed: 0, .failed: 0])
    }
}
