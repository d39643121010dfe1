import Foundation
@testable import JobService
import SluiceCore
import Testing

/// The change feed's rules for one read (`ChangeFeedRead`), as tables: which rows this node
/// takes, which it reads again on their own, which removals it applies, and when the queue's
/// stored settings are taken.
@Suite struct ChangeFeedRulesTests {
    static let read = ChangeFeedRead(writesBefore: 10)

    @Test(arguments: [
        // (this node's last control write of the job, a run's end unrecorded, commands holding it) → newer
        (Int?.none, false, 0, false),
        (5, false, 0, false),
        (10, false, 0, false),
        (11, false, 0, true),
        (nil, true, 0, true),
        (nil, false, 1, true),
        (3, true, 2, true),
    ])
    func aRowIsTakenUnlessThisNodesCopyIsNewer(lastWrite: Int?, unrecorded: Bool, holds: Int, newer: Bool) {
        #expect(Self.read.isNewer(lastWrite: lastWrite, unrecorded: unrecorded, holds: holds) == newer)
    }

    @Test func onlyWritesAfterTheReadBeganAreKeptWhenTheMarksArePruned() {
        #expect(Self.read.isOlder(lastWrite: 10))
        #expect(Self.read.isOlder(lastWrite: nil))
        #expect(!Self.read.isOlder(lastWrite: 11))
    }

    @Test func storedSettingsAreTakenWhenChangedAndNotWrittenHereSinceTheReadBegan() {
        let current = QueueSettings(maxActive: 3, limitRate: nil)
        let stored = QueueSettings(maxActive: 5, limitRate: 1000)
        #expect(Self.read.settings(stored, current: current, settingsWritten: 10) == stored)
        #expect(Self.read.settings(stored, current: current, settingsWritten: 11) == nil)
        #expect(Self.read.settings(current, current: current, settingsWritten: 0) == nil)
        #expect(Self.read.settings(nil, current: current, settingsWritten: 0) == nil)
    }

    @Test func aJobReadAgainOnItsOwn() {
        let row = JobSnapshot(id: "a", url: "http://127.0.0.1:9/f", state: .queued, connections: 1, priority: 0, createdAt: Date())
        #expect(ChangeFeedRead.rechecked(row: row, held: true, newer: false) == .absorb(row))
        #expect(ChangeFeedRead.rechecked(row: row, held: false, newer: false) == .absorb(row))
        #expect(ChangeFeedRead.rechecked(row: row, held: true, newer: true) == .recheck)
        #expect(ChangeFeedRead.rechecked(row: nil, held: true, newer: false) == .remove)
        #expect(ChangeFeedRead.rechecked(row: nil, held: false, newer: false) == .nothing)
        #expect(ChangeFeedRead.rechecked(row: nil, held: true, newer: true) == .recheck)
    }

    @Test(arguments: [
        // (held here, this node's copy newer) → what the removal does
        (false, false, ChangeFeedRead.Removal.forget),
        (false, true, .forget),
        (true, false, .remove),
        (true, true, .recheck),
    ])
    func aRemovalRead(held: Bool, newer: Bool, removal: ChangeFeedRead.Removal) {
        #expect(ChangeFeedRead.removal(held: held, newer: newer) == removal)
    }

    @Test func aFullReadRechecksTheLiveJobsHeldHereItDoesNotHave() {
        let held = [(id: "a", live: true), (id: "b", live: true), (id: "c", live: false), (id: "d", live: true)]
        #expect(ChangeFeedRead.absentFromFullRead(present: ["a"], held: held) == ["b", "d"])
        #expect(ChangeFeedRead.absentFromFullRead(present: ["a", "b", "d"], held: held).isEmpty)
    }
}
