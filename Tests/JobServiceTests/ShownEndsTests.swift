import Foundation
@testable import JobService
import SluiceCore
import Testing

/// A cluster node shows each finished row and removal of a job it does not hold once, though
/// the change feed's overlap brings them two or three times.
@Suite struct ShownEndsTests {
    static func row(_ state: JobState, at seconds: Double) -> JobSnapshot {
        var job = JobSnapshot(
            id: "j", url: "http://127.0.0.1:9/j", state: state, connections: 1, priority: 0, createdAt: Date(timeIntervalSince1970: 0))
        job.updatedAt = Date(timeIntervalSince1970: 1_800_000_000 + seconds)
        return job
    }

    @Test func aRowReadAgainIsNotNewAndAChangedOneIs() {
        var shown = ShownEnds()
        // Let go here after its end was shown: the row read back (its time through a double,
        // a little off) is not news.
        shown.shown(Self.row(.completed, at: 1))
        let readAgain = shown.isNew(Self.row(.completed, at: 1.0000004))
        let changed = shown.isNew(Self.row(.completed, at: 5))
        let changedReadAgain = shown.isNew(Self.row(.completed, at: 5))
        let otherState = shown.isNew(Self.row(.failed, at: 5))
        #expect(!readAgain && changed && !changedReadAgain && otherState)
    }

    @Test func aRemovalIsToldOnce() {
        var shown = ShownEnds()
        let first = shown.isNewRemoval("j")
        let again = shown.isNewRemoval("j")
        // Removed by this node: the feed's removal is not news either.
        shown.removed("k")
        let own = shown.isNewRemoval("k")
        #expect(first && !again && !own)
    }
}
