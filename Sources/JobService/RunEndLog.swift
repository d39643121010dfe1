import DownloadEngine
import Logging
import SluiceCore

/// What the log says of a run's end, in the words a person reads (issue 36): the failure's
/// message, never a type's dump; nothing for a run that was stopped.
enum RunEndLog {
    static func line(for job: JobSnapshot, _ ended: RunEnd.Outcome, _ outcome: JobScheduler.Outcome) -> (Logger.Level, String)? {
        switch (ended, outcome) {
        case (.stopped, _), (.leaseLost, _):
            return nil
        case (_, _) where !job.state.isLive:
            // An earlier run recorded this result (a run that waited for it took it over),
            // or another node finished the job meanwhile: its lease, if any, goes.
            let result = if case .failure(let error) = outcome { "its failure (\(said(error)))" } else { "its result" }
            return (.notice, "job \(job.id) is \(job.state.rawValue) already; this run's end, \(result), changes nothing")
        case (.retryLater(let delay, _), .failure(let error)):
            return (.info, "job \(job.id) waits \(delay) before its next try: \(said(error))")
        case (.storeUnavailable, .failure(let error)):
            return (.warning, "job \(job.id) goes back to the queue until its store answers: \(said(error))")
        case (.failed(let failure), _):
            return (.warning, "job \(job.id) failed: \(failure.message) (\(failure.code))")
        default:
            return nil
        }
    }

    /// A run's error as the log says it.
    static func said(_ error: any Error) -> String {
        switch error {
        case let failure as SluiceError: failure.message
        case let later as RetryLater: later.error.message
        case is CancellationError: "stopped"
        default: "an unexpected failure"
        }
    }
}
