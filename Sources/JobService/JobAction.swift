import SluiceCore

/// What the scheduler does, as `JobMachine` decides it: the machine returns these, the
/// scheduler (the runner) carries them out in order. Nothing here is done by the machine.
enum JobAction<Run: RunHandle> {
    /// The job's new snapshot: into the table and to subscribers at once, into the store
    /// behind (`JobWrites`), with the webhook deliveries that tell `tell`. `expected` is the
    /// state the store must still hold for the write to be made (a cluster's fenced write);
    /// nil writes whatever the store holds (a single node's: its memory decides).
    case record(JobSnapshot, expected: JobState?, tell: WebhookEvent?)
    /// The job as the store holds it: into the table (placed by its age) and to subscribers,
    /// nothing written.
    case show(JobSnapshot)
    /// The job into the table only: the action after this one tells it.
    case keep(JobSnapshot)
    /// A finished row shown from the store: the change feed's overlap brings it again, not to
    /// be shown again (`ShownEnds`).
    case shownEnd(JobSnapshot)
    /// Starts a run of the job, which is `running` in the table now; a claimed one first
    /// takes over its partial file.
    case start(JobSnapshot, claim: ClaimedJob?)
    /// The job's own rate limiter takes the job's new rate.
    case setRate(String, Int64?)
    /// The job met a full disk: it waits for space to come back (`DiskWatch`).
    case waitForSpace(String)
    /// A line for the log, saying why the next actions happen.
    case note(String)
    /// Cancels this run's task; its slot is `stopping` already (a checkpoint ends it).
    case cancel(Run)
    /// Asks the store for up to this many ready jobs (a cluster's claim).
    case claim(Int)
    /// Gives the job's lease back to the store, unless a run or an edit still needs it.
    case releaseLease(String)
    /// Fails the queued jobs waiting for this one, down the chain (`DependencyCascade`),
    /// saying why.
    case failDependents(of: String, reason: String)
    /// Fails this queued job (its dependency is gone), then the jobs waiting for it, down
    /// the chain (`JobMachine.dependencyFailed`).
    case failCascade(from: String, reason: String)
    /// Asks the store, behind the actor, for the states of the jobs named here that this node
    /// knows nothing of (a cluster node's: another node may have finished one).
    case askStore([String])
    /// Lets the queue start what it can, and wakes it when the earliest wait ends.
    case schedule
    /// A finished job leaves the table once its state is stored and nothing holds it.
    case letGo(String)
    /// A run's end the store could not take: kept, and recorded under its lease by the
    /// heartbeat once the store answers (`recordEndedRuns`).
    case keepUnrecorded(JobSnapshot, lease: Lease)
}

/// A write the store must take before the machine goes on (a cluster node's): the runner
/// awaits it, and its answer comes back to the machine as an event.
enum StoreFirst: Equatable {
    /// A command's change, written while the store still holds `expected`: answered by
    /// `JobMachine.commandWritten`; a store that cannot write changes nothing (503), a job
    /// another node changed first is read back (409).
    case controlWrite(JobSnapshot, expected: JobState)
    /// A run's end, written under its lease before anything is shown: answered by
    /// `JobMachine.finishAnswered`.
    case finishRun(JobSnapshot, lease: Lease, tell: WebhookEvent?)
}

/// How the store answered a run's end written under its lease (`StoreFirst.finishRun`).
enum FinishAnswer: Equatable {
    case recorded
    /// The lease was taken back meanwhile: the outcome is another node's to record.
    case takenBack
    /// The store did not answer.
    case unavailable
}

/// What follows a run's end written under its lease, as `JobMachine.finishAnswered` decides.
enum FinishFollowUp<Run: RunHandle> {
    /// The job was deleted meanwhile: nothing to record or show.
    case nothing
    /// The store holds what won (another node's outcome, or a command's change made
    /// meanwhile): the job is read back. `takenBack` counts a lost lease.
    case readBack(takenBack: Bool)
    /// Shown ended, recorded later (these actions); the run's end is not recorded yet.
    case unrecorded([JobAction<Run>])
    /// Recorded: `tell` is told, then `JobMachine.endTold` says what follows.
    case recorded(tell: WebhookEvent?)
}

extension FinishFollowUp: Equatable where Run: Equatable {}

extension JobAction: Equatable where Run: Equatable {}
