import SluiceCore

/// How a node comes to run a job, the one thing a single node and a cluster node do
/// differently in the queue: a single node runs what its own queue starts (every job is its
/// own); a cluster node claims jobs from the shared store, which decides which are ready,
/// and runs one only while it holds its lease. Rules in a value; the scheduler asks them
/// instead of asking whether it is in a cluster.
enum Claiming: Equatable, CaseIterable {
    /// A single node: its memory decides.
    case own
    /// A cluster node: the store decides, under leases.
    case leased

    /// Whether this node may run a job (or keep its slot across an edit's stop), given
    /// whether it holds the job's lease.
    func mayRun(holdingLease: Bool) -> Bool {
        self == .own || holdingLease
    }

    /// What the queue does with its free slots.
    enum Starts: Equatable {
        case none
        /// These ready jobs start, in this order.
        case start([String])
        /// Ask the store for up to this many ready jobs.
        case claim(Int)
    }

    /// With `running` slots taken (runs, and runs an edit holds) and the ready jobs this node
    /// knows of: starts chosen here, or a claim of the free slots when any job looks ready.
    func starts(ready: [QueuePlan.Candidate], running: Int, settings: QueueSettings) -> Starts {
        let free = settings.maxActive - running
        guard free > 0, !settings.paused, !ready.isEmpty else { return .none }
        switch self {
        case .own: return .start(QueuePlan.starts(ready: ready, running: running, settings: settings))
        case .leased: return .claim(free)
        }
    }

    /// Whether a user's command is written to the store before it changes anything here
    /// (a cluster's control write: another node may have changed the job), rather than
    /// decided in memory and stored behind.
    var writesCommandsFirst: Bool { self == .leased }

    /// Whether a job that would start at once is stored `running` by its creation's write:
    /// only where no claim is needed to start it.
    var startsInItsCreation: Bool { self == .own }

    /// Whether a job made here is known never to have run (no checkpoint to read): on a
    /// cluster, another node may claim and run it first.
    var knowsItsNewJobs: Bool { self == .own }

    /// At a start, the jobs the previous process left `running` go back to the queue; a
    /// cluster node takes back only those it held itself (the store's `recoverOwnJobs`), the
    /// others' are theirs (or the rescuer's).
    var requeuesEveryRunningJobAtStart: Bool { self == .own }

    /// Whether this node knows of every finished job (it counts what it left to its store): a
    /// cluster node may not have heard yet of a job another node finished, and asks.
    var knowsEveryFinishedJob: Bool { self == .own }
}
