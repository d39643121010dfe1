/// A run of a job's download as `RunSlots` sees it: which start of the job it was.
protocol RunHandle {
    var generation: Int { get }
}

/// Where each job's download stands on this node: running, told to stop and ending, or
/// ended with its end being recorded. One slot per job, so a run is always where a command
/// can find it (a pause that found a run in no table answered before the run's end was
/// recorded, and the job changed after the answer).
///
/// A value: its functions decide, the scheduler acts on what they return (cancels a task,
/// waits for one, records an end).
struct RunSlots<Run: RunHandle> {
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
    }

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

    private var slots: [String: Slot] = [:]

    subscript(id: String) -> Slot? { slots[id] }

    /// The job's current run.
    func running(_ id: String) -> Run? {
        guard case .running(let run)? = slots[id] else { return nil }
        return run
    }

    /// A run of the job that is ending (told to stop, or recording its end): what a command
    /// on the job waits for before it reads the job's bytes or result.
    func ending(_ id: String) -> Run? {
        switch slots[id] {
        case .stopping(let run)?, .recording(let run)?: run
        case .running?, nil: nil
        }
    }

    var isEmpty: Bool { slots.isEmpty }
    var runningIDs: [String] { slots.compactMap { if case .running = $0.value { $0.key } else { nil } } }
    var runningCount: Int { slots.values.count { if case .running = $0 { true } else { false } } }
    var endingRuns: [Run] { slots.values.compactMap { if case .running = $0 { nil } else { $0.run } } }

    /// A new run of the job starts. The caller has read `ending(id)` first: the new run waits
    /// for that one, whose result may be the job's.
    mutating func start(_ run: Run, id: String) {
        slots[id] = .running(run)
    }

    /// Stops the job's run: returns the run to cancel, nil when none runs.
    mutating func stop(_ id: String) -> Run? {
        guard case .running(let run)? = slots[id] else { return nil }
        slots[id] = .stopping(run)
        return run
    }

    /// A run's task ended.
    mutating func ended(_ id: String, generation: Int) -> End {
        switch slots[id] {
        case .running(let run)? where run.generation == generation:
            slots[id] = .recording(run)
            return .own
        case .stopping(let run)? where run.generation == generation:
            return .stopped
        default:
            return .superseded
        }
    }

    /// The end of the run of `generation` is recorded (or, a stopped run's, honoured): it
    /// leaves, unless a newer run took its place. Nothing is left of it to wait for.
    mutating func recorded(_ id: String, generation: Int) {
        guard let slot = slots[id], slot.run.generation == generation else { return }
        if case .running = slot { return }
        slots[id] = nil
    }

    /// The job is deleted: its slot goes. Returns what was there (a running run to cancel,
    /// any run to wait for).
    mutating func remove(_ id: String) -> Slot? {
        slots.removeValue(forKey: id)
    }
}
