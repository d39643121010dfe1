import DownloadEngine
import SluiceCore

/// What a run's end does to its job, decided in a value: the scheduler says how the run
/// ended and what state the job is in, and records what `decide` returns (the job's new
/// fields, the store write, the events and webhooks that follow from its new state).
///
/// It never traps: a job that finished meanwhile (another node's record read back, an
/// earlier run's result taken over) makes a late end change nothing, where asking
/// `JobLifecycle` for a finished job's failure is a programming error.
enum RunEnd: Equatable {
    /// How a run ended.
    enum Outcome: Equatable {
        /// The file is verified and in place.
        case placed
        /// Stopped (a pause, an edit, a shutdown): the job is as the stop left it.
        case stopped
        /// A cluster took the job's lease back: another node may run it now.
        case leaseLost
        /// The remote asked for a long wait (`Retry-After`), after `failures` failures.
        case retryLater(delay: Duration, failures: Int)
        /// Only the store failed, not the download.
        case storeUnavailable
        /// The disk was full (or the file did not fit above the floor kept free).
        case noSpace(JobSnapshot.JobError)
        /// Failed for good.
        case failed(JobSnapshot.JobError)

        /// The outcome of a run's task. Anything that is not a `SluiceError` is unexpected:
        /// a fixed message for API users (the details go to the log).
        init(_ outcome: Result<DownloadResult, any Error>) {
            switch outcome {
            case .success: self = .placed
            case .failure(is CancellationError): self = .stopped
            case .failure(is LeaseLost): self = .leaseLost
            case .failure(let later as RetryLater): self = .retryLater(delay: later.delay, failures: later.failures)
            case .failure(let error as SluiceError) where error.code == .storeUnavailable: self = .storeUnavailable
            case .failure(let error as SluiceError) where error.code == .noSpace:
                self = .noSpace(.init(code: error.code.rawValue, message: error.message))
            case .failure(let error):
                let failure = error as? SluiceError ?? SluiceError(.network, "the download failed unexpectedly", cause: error)
                self = .failed(.init(code: failure.code.rawValue, message: failure.message))
            }
        }
    }

    /// What the job becomes.
    struct Record: Equatable {
        var state: JobState
        /// The run's file is the job's result (its path, digest and size).
        var placed = false
        /// A queued job may run again this long from now.
        var retryIn: Duration?
        /// Failures carried into the next run's backoff (a `Retry-After` wait).
        var retryFailures: Int?
        /// The job's error, for a failure for good.
        var error: JobSnapshot.JobError?
        /// It waits for disk space, its bytes kept.
        var waitsForSpace = false
    }

    /// Nothing to record; the run's lease goes back to the store (a stopped run).
    case releaseLease
    /// Nothing to record; the lease is gone already.
    case forgetLease
    /// Nothing to record: the job has finished already.
    case alreadyFinished
    /// The job's new state and fields.
    case record(Record)

    /// How long a job whose run found its store unavailable waits before it runs again.
    static let storeRetryDelay: Duration = .seconds(5)

    static func decide(_ outcome: Outcome, state: JobState) -> RunEnd {
        switch outcome {
        case .stopped:
            return .releaseLease
        case .leaseLost:
            return .forgetLease
        case _ where !state.isLive:
            return .alreadyFinished
        case .placed:
            // A pause (or a pause and a resume) that raced with placing the file loses.
            var lifecycle = JobLifecycle(state: state)
            _ = lifecycle.downloadFinished()
            return .record(Record(state: lifecycle.state, placed: true))
        case .retryLater(let delay, let failures):
            return waitsAgain(state: state, delay: delay, failures: failures)
        case .storeUnavailable:
            // Back to the queue, to go on from its checkpoint once the store answers (a
            // cluster claims it again then).
            return waitsAgain(state: state, delay: storeRetryDelay, failures: nil)
        case .noSpace:
            // Back to the queue, its bytes kept (a download that cannot resume has freed
            // its partial file), until space comes back; a pause meanwhile is kept.
            var lifecycle = JobLifecycle(state: state)
            _ = lifecycle.retryScheduled()
            return .record(Record(state: lifecycle.state, waitsForSpace: lifecycle.state == .queued))
        case .failed(let error):
            // A user's pause (or pause and resume) while it was failing is kept; the error
            // is shown either way.
            var lifecycle = JobLifecycle(state: state)
            _ = lifecycle.downloadFailed()
            return .record(Record(state: lifecycle.state, error: error))
        }
    }

    /// A running job waits queued, its slot given to another; one the user paused or
    /// resumed meanwhile keeps their choice.
    private static func waitsAgain(state: JobState, delay: Duration, failures: Int?) -> RunEnd {
        var lifecycle = JobLifecycle(state: state)
        _ = lifecycle.retryScheduled()
        guard lifecycle.state == .queued else { return .record(Record(state: lifecycle.state)) }
        return .record(Record(state: .queued, retryIn: delay, retryFailures: failures))
    }
}
