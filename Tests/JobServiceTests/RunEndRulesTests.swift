import DownloadEngine
@testable import JobService
import SluiceCore
import Testing

/// A run's end as a table: how it ended × the job's state → what the job becomes.
@Suite struct RunEndRulesTests {
    typealias Record = RunEnd.Record
    static let broken = JobSnapshot.JobError(code: "http_status", message: "the remote answered 404")

    @Test(arguments: [
        // The file is in place: the job is done, whatever a racing pause said.
        (RunEnd.Outcome.placed, JobState.running, RunEnd.record(Record(state: .completed, placed: true))),
        (.placed, .paused, .record(Record(state: .completed, placed: true))),
        (.placed, .queued, .record(Record(state: .completed, placed: true))),
        // An earlier run recorded it, or another node finished the job: nothing changes.
        (.placed, .completed, .alreadyFinished),
        (.failed(broken), .completed, .alreadyFinished),
        (.failed(broken), .failed, .alreadyFinished),
        (.storeUnavailable, .failed, .alreadyFinished),
        (.retryLater(delay: .seconds(120), failures: 2), .completed, .alreadyFinished),
        // Stopped, or taken back by the cluster: the job is as the stop or the store left it.
        (.stopped, .paused, .releaseLease),
        (.stopped, .running, .releaseLease),
        (.leaseLost, .running, .forgetLease),
        // A failure for good fails a running job; a paused one keeps the user's choice.
        (.failed(broken), .running, .record(Record(state: .failed, error: broken))),
        (.failed(broken), .paused, .record(Record(state: .paused, error: broken))),
        // A long Retry-After: queued, its failures carried on, the slot given away.
        (
            .retryLater(delay: .seconds(120), failures: 2), .running,
            .record(Record(state: .queued, retryIn: .seconds(120), retryFailures: 2))
        ),
        (.retryLater(delay: .seconds(120), failures: 2), .paused, .record(Record(state: .paused))),
        // Only the store failed: queued for 5 s, never failed.
        (.storeUnavailable, .running, .record(Record(state: .queued, retryIn: .seconds(5)))),
        (.storeUnavailable, .paused, .record(Record(state: .paused))),
    ])
    func decides(outcome: RunEnd.Outcome, state: JobState, expected: RunEnd) {
        #expect(RunEnd.decide(outcome, state: state) == expected)
    }

    static let full = JobSnapshot.JobError(code: "no_space", message: "no space left on device")

    /// CONTRACT.md §4: a full disk is a wait, its bytes kept, never a failure.
    @Test(arguments: [
        (RunEnd.Outcome.noSpace(full), JobState.running, RunEnd.record(Record(state: .queued, waitsForSpace: true))),
        (.noSpace(full), .paused, .record(Record(state: .paused))),
        (.noSpace(full), .completed, .alreadyFinished),
    ])
    func aFullDiskIsAWait(outcome: RunEnd.Outcome, state: JobState, expected: RunEnd) {
        #expect(RunEnd.decide(outcome, state: state) == expected)
        #expect(RunEnd.Outcome(.failure(SluiceError(.noSpace, "no space left on device"))) == .noSpace(Self.full))
    }

    /// The task's result, classified: an unexpected error is a network failure with a fixed
    /// message, never the error's own words.
    @Test func outcomesAreClassified() {
        struct Odd: Error {}
        #expect(RunEnd.Outcome(.failure(CancellationError())) == .stopped)
        #expect(RunEnd.Outcome(.failure(LeaseLost())) == .leaseLost)
        #expect(RunEnd.Outcome(.failure(SluiceError(.storeUnavailable, "down"))) == .storeUnavailable)
        #expect(
            RunEnd.Outcome(.failure(SluiceError(.httpStatus, "the remote answered 404")))
                == .failed(.init(code: "http_status", message: "the remote answered 404")))
        #expect(RunEnd.Outcome(.failure(Odd())) == .failed(.init(code: "network", message: "the download failed unexpectedly")))
    }
}
