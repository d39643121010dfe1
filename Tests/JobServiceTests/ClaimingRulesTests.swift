@testable import JobService
import SluiceCore
import Testing

/// What a single node (`own`) and a cluster node (`leased`) do differently in the queue, as
/// tables: the one difference between them.
@Suite struct ClaimingRulesTests {
    static func ready(_ ids: [(String, Int)]) -> [QueuePlan.Candidate] {
        ids.enumerated().map { QueuePlan.Candidate(id: $1.0, priority: $1.1, sequence: $0) }
    }

    struct Case: CustomTestStringConvertible {
        var name: String
        var claiming: Claiming
        var ready: [(String, Int)]
        var running: Int
        var settings: QueueSettings
        var expected: Claiming.Starts
        var testDescription: String { "\(claiming): \(name)" }
    }

    static let cases: [Case] = [
        Case(
            name: "the free slots go by priority, then age", claiming: .own, ready: [("a", 0), ("b", 5), ("c", 0)], running: 1,
            settings: QueueSettings(maxActive: 3), expected: .start(["b", "a"])),
        Case(
            name: "the store is asked for the free slots", claiming: .leased, ready: [("a", 0), ("b", 5), ("c", 0)], running: 1,
            settings: QueueSettings(maxActive: 3), expected: .claim(2)),
        Case(
            name: "no slot free", claiming: .own, ready: [("a", 0)], running: 3, settings: QueueSettings(maxActive: 3), expected: .none),
        Case(
            name: "no slot free", claiming: .leased, ready: [("a", 0)], running: 3, settings: QueueSettings(maxActive: 3),
            expected: .none),
        Case(
            name: "the queue paused", claiming: .own, ready: [("a", 0)], running: 0, settings: QueueSettings(paused: true, maxActive: 3),
            expected: .none),
        Case(
            name: "the queue paused", claiming: .leased, ready: [("a", 0)], running: 0,
            settings: QueueSettings(paused: true, maxActive: 3), expected: .none),
        Case(name: "nothing ready", claiming: .own, ready: [], running: 0, settings: QueueSettings(maxActive: 3), expected: .none),
        Case(
            name: "nothing looks ready: the store is not asked", claiming: .leased, ready: [], running: 0,
            settings: QueueSettings(maxActive: 3), expected: .none),
    ]

    @Test(arguments: cases) func whatTheFreeSlotsDo(_ rule: Case) {
        #expect(rule.claiming.starts(ready: Self.ready(rule.ready), running: rule.running, settings: rule.settings) == rule.expected)
    }

    @Test(arguments: [
        (Claiming.own, false, true), (.own, true, true), (.leased, false, false), (.leased, true, true),
    ])
    func whoMayRunAJob(claiming: Claiming, holdingLease: Bool, mayRun: Bool) {
        #expect(claiming.mayRun(holdingLease: holdingLease) == mayRun)
    }

    @Test func onlyANodeThatNeedsNoClaimStartsAJobInItsCreationAndKnowsItNeverRan() {
        #expect(Claiming.own.startsInItsCreation && Claiming.own.knowsItsNewJobs && Claiming.own.requeuesEveryRunningJobAtStart)
        #expect(!Claiming.leased.startsInItsCreation && !Claiming.leased.knowsItsNewJobs)
        #expect(!Claiming.leased.requeuesEveryRunningJobAtStart)
    }
}
