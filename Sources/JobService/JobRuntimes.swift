import DownloadEngine

/// A run of a job's download as `JobRuntimes` sees it: which start of the job it was.
protocol RunHandle {
    var generation: Int { get }
}

/// What this node keeps about a job beside its snapshot, while it has any: its run's slot,
/// its lease, whether an edit holds it, its retry count, its rate limiter, when its last
/// progress event went out, whether it has never run. One value per job, gone with its last
/// field, where eight parallel dictionaries and sets each had to be cleared.
struct JobRuntime<Run: RunHandle> {
    enum Slot {
        /// The job's current run.
        case running(Run)
        /// Told to stop (a pause, an edit, a shutdown, a lease taken back): its task may
        /// still be checkpointing, or placing a file it had verified before the stop.
        case stopping(Run)
        /// Ended by itself: its end is being recorded.
        case recording(Run)

        var run: Run {
            switch self {
            case .running(let run), .stopping(let run), .recording(let run): run
            }
        }

        /// The run when it is ending (stopping, or recording its end).
        var ending: Run? {
            if case .running = self { nil } else { run }
        }
    }

    /// Where the job's download stands on this node; nil when none runs or ends here.
    fileprivate(set) var slot: Slot?
    /// A cluster node's claim on the job (kept by an edit across a stop and a restart).
    var lease: Lease?
    /// An edit is under way: the queue neither starts the job nor gives its slot away.
    var editing = false
    /// Failures of the run parked by a remote's `Retry-After`, for its next backoff.
    var retryFailures: Int?
    /// The job's own rate limiter, under the queue's, while it runs or may run again.
    var limiter: RateLimiter?
    /// When the job's last progress event went out (at most one per 250 ms, real time).
    var lastProgressEvent: ContinuousClock.Instant?
    /// Created here and not run yet: the store holds no checkpoint of it to read.
    var neverRun = false
    /// Commands under way on the job (`holdStored`): a finished job stays in the table until
    /// the last is done, though its state is stored meanwhile (their store calls are awaited).
    var holds = 0
    /// Its run placed the file and the end is being recorded: the job is completed whatever
    /// the record's wait, and a command on it is answered so at once.
    var placedFile = false

    var isEmpty: Bool {
        slot == nil && lease == nil && !editing && retryFailures == nil && limiter == nil && lastProgressEvent == nil && !neverRun
            && holds == 0 && !placedFile
    }
}

/// Every job's runtime on this node, and the rules of a job's runs: running, told to stop
/// and ending, or ended with its end being recorded. One slot per job, so a run is always
/// where a command can find it (a pause that found a run in no table answered before the
/// run's end was recorded, and the job changed after the answer).
///
/// A value: its functions decide, the scheduler acts on what they return (cancels a task,
/// waits for one, records an end).
struct JobRuntimes<Run: RunHandle> {
    typealias Slot = JobRuntime<Run>.Slot

    /// What a run's end means, by `ended(_:generation:)`.
    enum End: Equatable {
        /// It was the job's current run: now `recording`; record its end, then `recorded`.
        case own
        /// It was told to stop and nothing newer runs: a success is the job's (the file was
        /// placed before the stop came); anything else changes nothing. Then `recorded`.
        case stopped
        /// A newer run exists (it takes the result over) or the job is gone.
        case superseded
    }

    private var runtimes: [String: JobRuntime<Run>] = [:]
    /// The jobs with a slot, an edit or a lease: what the queue reads on every create and
    /// every scheduling pass, kept as the runtimes change. Every job made here and not run
    /// yet has a runtime (`neverRun`), so reading these from `runtimes` cost a pass over
    /// every such job each time (200,000 paused jobs made each create take milliseconds).
    private var withSlot: Set<String> = []
    private var editing: Set<String> = []
    private var withLease: Set<String> = []

    /// A job's runtime; an empty one when it has none. Set empty, it goes.
    subscript(id: String) -> JobRuntime<Run> {
        get { runtimes[id] ?? JobRuntime() }
        set {
            runtimes[id] = newValue.isEmpty ? nil : newValue
            index(id, newValue)
        }
    }

    private mutating func index(_ id: String, _ runtime: JobRuntime<Run>?) {
        Self.mark(&withSlot, id, runtime?.slot != nil)
        Self.mark(&editing, id, runtime?.editing == true)
        Self.mark(&withLease, id, runtime?.lease != nil)
    }

    private static func mark(_ set: inout Set<String>, _ id: String, _ member: Bool) {
        if member { set.insert(id) } else { set.remove(id) }
    }

    var isEmpty: Bool { runtimes.isEmpty }

    func slot(_ id: String) -> Slot? { runtimes[id]?.slot }

    /// The job's current run.
    func running(_ id: String) -> Run? {
        guard case .running(let run)? = runtimes[id]?.slot else { return nil }
        return run
    }

    /// A run of the job that is ending (told to stop, or recording its end): what a command
    /// on the job waits for before it reads the job's bytes or result.
    func ending(_ id: String) -> Run? { runtimes[id]?.slot?.ending }

    var runningIDs: [String] { withSlot.filter { running($0) != nil } }
    var runningCount: Int { withSlot.count { running($0) != nil } }
    var endingRuns: [Run] { withSlot.compactMap { ending($0) } }
    /// The leases this node holds.
    var leases: [Lease] { withLease.compactMap { runtimes[$0]?.lease } }
    /// Jobs an edit holds.
    var editingIDs: [String] { Array(editing) }

    /// Takes the job's lease (a run gives it back, a job goes): nil when none is held.
    mutating func takeLease(_ id: String) -> Lease? {
        defer { self[id].lease = nil }
        return runtimes[id]?.lease
    }

    /// A new run of the job starts. The caller has read `ending(id)` first: the new run waits
    /// for that one, whose result may be the job's.
    mutating func start(_ run: Run, id: String) {
        self[id].slot = .running(run)
    }

    /// Stops the job's run: returns the run to cancel, nil when none runs.
    mutating func stop(_ id: String) -> Run? {
        guard let run = running(id) else { return nil }
        self[id].slot = .stopping(run)
        return run
    }

    /// A run's task ended.
    mutating func ended(_ id: String, generation: Int) -> End {
        switch runtimes[id]?.slot {
        case .running(let run)? where run.generation == generation:
            self[id].slot = .recording(run)
            return .own
        case .stopping(let run)? where run.generation == generation:
            return .stopped
        default:
            return .superseded
        }
    }

    /// The end of the run of `generation` is recorded (or, a stopped run's, honoured): it
    /// leaves its slot, unless a newer run took its place. Nothing is left of it to wait for.
    mutating func recorded(_ id: String, generation: Int) {
        guard let slot = runtimes[id]?.slot, slot.run.generation == generation else { return }
        if case .running = slot { return }
        self[id].slot = nil
        self[id].placedFile = false
    }

    /// The job is deleted: everything this node kept about it goes. Returns its slot (a
    /// running run to cancel, any run to wait for).
    mutating func remove(_ id: String) -> Slot? {
        defer { index(id, nil) }
        return runtimes.removeValue(forKey: id)?.slot
    }
}
