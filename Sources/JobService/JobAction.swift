import SluiceCore

/// What the scheduler does, as `JobMachine` decides it: the machine returns these, the
/// scheduler (the runner) carries them out in order. Nothing here is done by the machine.
enum JobAction<Run: RunHandle> {
    /// The job's new snapshot: into the table and to subscribers at once, into the store
    /// behind (`JobWrites`), with the webhook deliveries that tell `tell`. `expected` is the
    /// state the store must still hold for the write to be made (a cluster's fenced write);
    /// nil writes whatever the store holds (a single node's: its memory decides).
    case record(JobSnapshot, expected: JobState?, tell: WebhookEvent?)
    /// A command's change, written first while the store still holds `expected` (a cluster
    /// node's): the runner awaits the store, then feeds `JobMachine.commandWritten`; a store
    /// that cannot write changes nothing (503), a job another node changed first is read
    /// back (409).
    case controlWrite(JobSnapshot, expected: JobState)
    /// A cluster run's end, written under its lease before anything is shown: the runner
    /// awaits the store, then feeds `JobMachine.endStored` (or reads the job back when the
    /// lease was taken meanwhile).
    case finishRun(JobSnapshot, lease: Lease, tell: WebhookEvent?)
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
}

extension JobAction: Equatable where Run: Equatable {}
