import SluiceCore

/// A pause's (or a bulk pause's) wait for the runs it stopped, and what it then takes as
/// the job's: the rules, in a value; the scheduler waits and reads the store.
///
/// A pause answers once the run has stopped and its checkpoint is stored, so the `bytesDone`
/// it returns is final and an edit right after it sees those bytes (issue 20, point 5).
enum RunSettle {
    /// How long to wait for a run told to stop.
    enum Wait: Equatable {
        /// Nothing of the job is ending here.
        case none
        /// Up to the settle limit: a run that has not reached its last point of return
        /// stops at its next checkpoint, or never does (a remote that does not answer).
        case upToLimit
        /// Until it ends, on the deadlines of its own store calls: a run past its last point
        /// of return (placing its file, recording its end) ends with its result whatever
        /// the stop, and that result is the answer.
        case untilEnded
    }

    static func wait(ending: Bool, committed: Bool) -> Wait {
        guard ending else { return .none }
        return committed ? .untilEnded : .upToLimit
    }

    /// After the wait, whether the stopped run's checkpoint is the job's to take: the run has
    /// left its slot (or is still the job's ending one), no newer run started meanwhile (a
    /// resume), and the job is not running again.
    static func takesCheckpoint(run generation: Int, slot: Int?, ending: Int?, state: JobState?) -> Bool {
        guard let state, state != .running else { return false }
        return slot == nil || ending == generation
    }

    /// The bytes to show: the checkpoint's, when they differ from what the job shows (what
    /// the run had in flight when it stopped is counted, and nothing more will be).
    static func bytes(checkpoint: Int64?, shown: Int64) -> Int64? {
        guard let checkpoint, checkpoint != shown else { return nil }
        return checkpoint
    }
}
