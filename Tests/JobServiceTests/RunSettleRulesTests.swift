@testable import JobService
import SluiceCore
import Testing

/// A pause's wait for the run it stopped, and the bytes it then takes as the job's, as tables.
@Suite struct RunSettleRulesTests {
    @Test(arguments: [
        (false, false, RunSettle.Wait.none), (false, true, .none), (true, false, .upToLimit), (true, true, .untilEnded),
    ])
    func howLongAPauseWaits(ending: Bool, committed: Bool, expected: RunSettle.Wait) {
        #expect(RunSettle.wait(ending: ending, committed: committed) == expected)
    }

    struct Case: CustomTestStringConvertible {
        var name: String
        /// The slot's run and ending run now (their generations), and the job's state.
        var slot: Int?
        var ending: Int?
        var state: JobState?
        var takes: Bool
        var testDescription: String { name }
    }

    /// The run waited for is generation 3.
    static let cases: [Case] = [
        Case(name: "ended, job paused", slot: nil, ending: nil, state: .paused, takes: true),
        Case(name: "ended, job queued (sent back)", slot: nil, ending: nil, state: .queued, takes: true),
        Case(name: "still ending after the limit", slot: 3, ending: 3, state: .paused, takes: true),
        Case(name: "a resume started a newer run", slot: 4, ending: nil, state: .running, takes: false),
        Case(name: "a newer run is ending", slot: 4, ending: 4, state: .paused, takes: false),
        Case(name: "running again", slot: nil, ending: nil, state: .running, takes: false),
        Case(name: "deleted meanwhile", slot: nil, ending: nil, state: nil, takes: false),
        Case(name: "completed by its run", slot: nil, ending: nil, state: .completed, takes: true),
    ]

    @Test(arguments: cases) func whetherTheCheckpointIsTheJobs(_ rule: Case) {
        #expect(RunSettle.takesCheckpoint(run: 3, slot: rule.slot, ending: rule.ending, state: rule.state) == rule.takes)
    }

    @Test func theBytesShownAreTheCheckpointsWhenTheyDiffer() {
        #expect(RunSettle.bytes(checkpoint: 1000, shown: 900) == 1000)
        #expect(RunSettle.bytes(checkpoint: 1000, shown: 1000) == nil)
        #expect(RunSettle.bytes(checkpoint: nil, shown: 900) == nil)
    }
}
