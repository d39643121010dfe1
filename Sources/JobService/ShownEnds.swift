import Foundation
import SluiceCore

/// What a cluster node last showed its event streams of jobs it no longer holds: finished
/// rows and removals. The change feed reads again the 2 s before its cursor, so the same row
/// or removal comes two or three times; each is shown once. Kept 10 s.
struct ShownEnds {
    private var finished: [String: (state: JobState, updatedAt: Date, at: ContinuousClock.Instant)] = [:]
    private var removals: [String: ContinuousClock.Instant] = [:]

    /// `job` was shown as it is now.
    mutating func shown(_ job: JobSnapshot) {
        finished[job.id] = (job.state, job.updatedAt, .now)
    }

    /// Whether `row` differs from what was last shown of its job (then it counts as shown).
    /// Rows are compared by state and time of change (to the millisecond: the store keeps
    /// the time as seconds in a double).
    mutating func isNew(_ row: JobSnapshot) -> Bool {
        if let last = finished[row.id], last.state == row.state, Self.same(last.updatedAt, row.updatedAt) { return false }
        shown(row)
        return true
    }

    /// `id`'s removal was shown.
    mutating func removed(_ id: String) {
        removals[id] = .now
        finished[id] = nil
    }

    /// Whether `id`'s removal is news (then it counts as shown).
    mutating func isNewRemoval(_ id: String) -> Bool {
        guard removals[id] == nil else { return false }
        removed(id)
        return true
    }

    mutating func forgetOld() {
        let now = ContinuousClock.now
        finished = finished.filter { now - $0.value.at < .seconds(10) }
        removals = removals.filter { now - $0.value < .seconds(10) }
    }

    private static func same(_ one: Date, _ other: Date) -> Bool {
        abs(one.timeIntervalSince(other)) < 0.001
    }
}
