@testable import JobService
import SluiceCore
import Testing

/// An edit's rules as tables: what the edit sees of the job → the step it takes.
@Suite struct JobEditRulesTests {
    typealias Sight = JobEdit.Sight

    static let newURL = JobEdit(changesTheDownload: true, changesTheURL: true, keepBytes: false)
    static let newURLKeepingBytes = JobEdit(changesTheDownload: true, changesTheURL: true, keepBytes: true)
    static let newHeaders = JobEdit(changesTheDownload: true, changesTheURL: false, keepBytes: false)
    static let newPriority = JobEdit(changesTheDownload: false, changesTheURL: false, keepBytes: false)

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let edit: JobEdit
        let sight: Sight
        let step: JobEdit.Step
        var testDescription: String { name }
    }

    /// The first look at the job: its own refusals, else the request's checks, once.
    @Test func theRequestIsCheckedOnceBeforeAnyStop() {
        var edit = Self.newURL
        let step1 = edit.next(Sight(state: .running, run: .running))
        #expect(step1 == .checkRequest)
        let step2 = edit.next(Sight(state: .running, run: .running))
        #expect(step2 == .stopRun)
    }

    /// The first step after the request's checks (or the refusal that comes before them).
    @Test(arguments: [
        Row(name: "a gone job", edit: newURL, sight: Sight(state: nil), step: .refuse(.gone)),
        Row(name: "a completed job", edit: newPriority, sight: Sight(state: .completed), step: .refuse(.completed)),
        Row(name: "a new URL for a running job stops its run", edit: newURL, sight: Sight(state: .running, run: .running), step: .stopRun),
        Row(name: "new headers stop the run too", edit: newHeaders, sight: Sight(state: .running, run: .running), step: .stopRun),
        Row(
            name: "a new priority needs no stop", edit: newPriority, sight: Sight(state: .running, run: .running), step: .apply
        ),
        Row(
            name: "a run a pause stopped is waited for", edit: newURL, sight: Sight(state: .paused, run: .ending), step: .waitForRun
        ),
        Row(name: "a queued job's bytes are read", edit: newURL, sight: Sight(state: .queued), step: .readBytes),
        Row(name: "new headers read no bytes", edit: newHeaders, sight: Sight(state: .paused), step: .apply),
        Row(
            name: "another node's run is not this node's to stop", edit: newURL,
            sight: Sight(state: .running, claim: .otherNode), step: .refuse(.runningElsewhere)
        ),
        Row(
            name: "another node's running job may take a new priority", edit: newPriority,
            sight: Sight(state: .running, claim: .otherNode), step: .apply
        ),
        Row(
            name: "a failed job is edited", edit: newURLKeepingBytes, sight: Sight(state: .failed), step: .readBytes
        ),
    ])
    func firstLook(row: Row) {
        var edit = row.edit
        var step = edit.next(row.sight)
        if step == .checkRequest { step = edit.next(row.sight) }
        #expect(step == row.step)
    }

    /// Runs `edit` through `sights`, one step each, and returns the steps.
    static func steps(_ edit: inout JobEdit, _ sights: [Sight]) -> [JobEdit.Step] {
        sights.map { edit.next($0) }
    }

    /// A running job's new URL, all the way: checks, stop, wait, the job read again, its
    /// bytes read and probed, the job read again with its claim, apply.
    @Test func aRunningJobsNewURLStopsWaitsReadsAndProbes() {
        var edit = Self.newURL
        let running = Sight(state: .running, run: .running)
        let before = Self.steps(
            &edit, [running, running, Sight(state: .running, run: .ending), Sight(state: .running), Sight(state: .running)])
        #expect(before == [.checkRequest, .stopRun, .waitForRun, .recheck(claim: false), .readBytes])
        let probes = edit.bytesRead(any: true)
        #expect(probes)
        let refusal = edit.probed(.sameFile(finalURL: "https://cdn.example/f"))
        #expect(refusal == nil)
        let after = Self.steps(&edit, [Sight(state: .running), Sight(state: .running)])
        #expect(after == [.recheck(claim: true), .apply])
        #expect(edit.bytes == .moved(finalURL: "https://cdn.example/f"))
    }

    /// Once stopped and waited for, the edit does not stop or wait again, whatever it sees.
    @Test func aRunIsStoppedAndWaitedForOnce() {
        var edit = Self.newHeaders
        let ending = Sight(state: .running, run: .ending)
        let steps = Self.steps(
            &edit, [Sight(state: .running, run: .running), Sight(state: .running, run: .running), ending, ending, ending])
        #expect(steps == [.checkRequest, .stopRun, .waitForRun, .recheck(claim: false), .apply])
    }

    /// The job deleted or completed during a wait: the edit is refused then.
    @Test(arguments: [(JobState?.none, JobEdit.Refusal.gone), (.completed, .completed)])
    func whatHappenedDuringAWaitIsSeen(state: JobState?, refusal: JobEdit.Refusal) {
        var edit = Self.newURL
        let running = Sight(state: .running, run: .running)
        let steps = Self.steps(&edit, [running, running, Sight(state: state)])
        #expect(steps == [.checkRequest, .stopRun, .refuse(refusal)])
    }

    /// No bytes on disk: nothing to probe, nothing to keep or drop.
    @Test func nothingOnDiskIsNotProbed() {
        var edit = Self.newURLKeepingBytes
        let paused = Sight(state: .paused)
        let before = Self.steps(&edit, [paused, paused])
        #expect(before == [.checkRequest, .readBytes])
        let probes = edit.bytesRead(any: false)
        #expect(!probes)
        let after = edit.next(paused)
        #expect(after == .apply)
        #expect(edit.bytes == .unchanged)
    }

    /// The probe's answer → the bytes, or with `keepBytes` a refusal (409 `remote_changed`).
    @Test(arguments: [
        (JobEdit.Probe.sameFile(finalURL: nil), false, JobEdit.Step?.none, JobEdit.Bytes.moved(finalURL: nil)),
        (.otherFile, false, nil, .dropped),
        (.unknown, false, nil, .moved(finalURL: nil)),
        (.sameFile(finalURL: nil), true, nil, .moved(finalURL: nil)),
        (.otherFile, true, .refuse(.newURLServesAnotherFile), .unchanged),
        (.unknown, true, .refuse(.newURLUnprobed), .unchanged),
    ])
    func probes(probe: JobEdit.Probe, keepBytes: Bool, step: JobEdit.Step?, bytes: JobEdit.Bytes) {
        var edit = JobEdit(changesTheDownload: true, changesTheURL: true, keepBytes: keepBytes)
        let before = Self.steps(&edit, [Sight(state: .paused), Sight(state: .paused)])
        #expect(before == [.checkRequest, .readBytes])
        let probes = edit.bytesRead(any: true)
        #expect(probes)
        let answer = edit.probed(probe)
        #expect(answer == step)
        #expect(edit.bytes == bytes)
    }

    /// After the edit, applied or refused: what becomes of a run it stopped.
    @Test(arguments: [
        (Sight(state: .running), true, JobEdit.Afterwards.restart),
        (Sight(state: .running, run: .ending), true, .restart),
        (Sight(state: .running), false, .requeue),
        (Sight(state: .running, run: .running), true, .nothing),
        (Sight(state: .running, claim: .otherNode), true, .nothing),
        (Sight(state: .paused), true, .nothing),
        (Sight(state: nil), true, .nothing),
    ])
    func afterwards(sight: Sight, dependenciesComplete: Bool, expected: JobEdit.Afterwards) {
        #expect(JobEdit.afterwards(sight, dependenciesComplete: dependenciesComplete) == expected)
    }
}
