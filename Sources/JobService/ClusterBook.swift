import Foundation
import SluiceCore

/// What a cluster node keeps beside its jobs, in one value the runner owns: the ends the store has not taken yet, the creates given up, the count of
/// its control writes (a read of the change feed older than one is not taken), the finished
/// jobs it counts and has shown, and where the reading of other nodes' changes stands.
/// A single node's book (`keeps` false) records nothing: its methods are the only place the
/// runner's shared paths differ for a cluster.
struct ClusterBook {
    /// Whether this node is one of a cluster's.
    let keeps: Bool

    /// Jobs others wait for that the store had no row of when a cluster node asked (gone),
    /// and those it is being asked about (`DependencyStates.askStore`).
    var goneFromStore: Set<String> = []
    var askingStoreAbout: Set<String> = []
    /// Runs that ended while the store could not record it: shown ended, recorded (or found
    /// taken back) once the store answers again.
    var unrecordedRuns: [String: (job: JobSnapshot, lease: Lease)] = [:]
    /// A cluster node's creates answered 503 whose insert may commit all the same (its
    /// `COMMIT` outlived the request's budget), by when they were given up: never absorbed,
    /// and removed from the store by the heartbeat for a minute (`removeAbandonedCreates`).
    var abandonedCreates: [String: ContinuousClock.Instant] = [:]
    /// Counts this node's control writes; `controlWrites[id]` is the count at the job's last
    /// one. A read of the store that began before it is older than this node's copy.
    var writeCount = 0
    var controlWrites: [String: Int] = [:]
    /// The count at this node's last write of the queue's settings.
    var settingsWritten = 0
    /// This node's own changes to the finished jobs it counts as the store's, until a read of
    /// the change feed has seen them (`StoredFinishedCounts`); and whether a read is being
    /// absorbed (what it lets go, it has seen).
    var storedCounts = StoredFinishedCounts()
    /// What event streams were last shown of jobs this node no longer holds (finished, or
    /// removed), for the change feed's overlap: a row or a removal read again is not shown
    /// again (`ShownEnds`).
    var shownEnds = ShownEnds()
    var absorbingRead = false
    /// Whether a read of the change feed is under way, and whether another was asked for
    /// meanwhile (a full one, if any ask was).
    var synchronizing = false
    var syncAgain = false
    var syncAgainFull = false
    /// Jobs this node wrote while a read of the change feed was under way: read again, one
    /// by one, at the next read.
    var toRecheck: Set<String> = []
    var cursor: ClusterCursor?

    /// Whether this node's last heartbeat was answered: the rescue waits for one.
    var heartbeatAnswered = false

    init(keeps: Bool) { self.keeps = keeps }

    /// This node just wrote the job's control fields: a read of the store that began
    /// earlier must not take them back.
    mutating func noteControlWrite(_ id: String) {
        guard keeps else { return }
        writeCount += 1
        controlWrites[id] = writeCount
    }

    /// A job is deleted here: nothing of it is counted, shown or recorded any more.
    mutating func removed(_ id: String, state: JobState) {
        guard keeps else { return }
        if !state.isLive { storedCounts.removed(id, state: state) }
        shownEnds.removed(id)
        unrecordedRuns[id] = nil
    }

    /// A finished job leaves the table, its end stored by this node: counted until a read of
    /// the store has seen it, and shown already (the read brings the row again).
    mutating func letGo(_ job: JobSnapshot) {
        guard keeps else { return }
        if !absorbingRead { storedCounts.letGo(job.id, state: job.state) }
        shownEnds.shown(job)
    }

    /// Creates answered 503 whose insert may commit all the same: removed by the heartbeat.
    mutating func abandon(_ ids: [String]) {
        guard keeps else { return }
        for id in ids { abandonedCreates[id] = .now }
    }
}
