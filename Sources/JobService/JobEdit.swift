import SluiceCore

/// An edit's decisions (`PATCH /jobs/ID`) as a value: the scheduler tells it what it sees of
/// the job before each step and does the step it returns (stops the run, waits for it, reads
/// and probes the bytes on disk, writes the new values) or answers the refusal. Once the edit
/// has ended, applied or not, `afterwards` says what becomes of a run it stopped.
///
/// The edit's rules as event → action tables (`JobEditRulesTests`); the I/O stays in
/// `JobScheduler+Edit`.
struct JobEdit: Equatable {
    /// What the scheduler sees of the job, again after every wait.
    struct Sight: Equatable {
        /// The job's state; nil when it is gone (deleted meanwhile).
        var state: JobState?
        /// Its run on this node.
        var run: Run
        /// Who may run it.
        var claim: Claim

        init(state: JobState?, run: Run = .none, claim: Claim = .thisNode) {
            self.state = state
            self.run = run
            self.claim = claim
        }
    }

    /// A job's run on this node.
    enum Run: Equatable {
        case none
        /// Its download runs.
        case running
        /// Told to stop, or recording its end: it ends after its checkpoint.
        case ending
    }

    /// Who may run the job: a single node or the cluster node holding its lease, or (a
    /// cluster node without the lease) another node.
    enum Claim: Equatable {
        case thisNode
        case otherNode
    }

    enum Step: Equatable {
        /// Answer the refusal; nothing changes.
        case refuse(Refusal)
        /// Check what the request names (the new URL's address, the webhook, the proxy),
        /// then look again. Once, after the job's own refusals and before any stop.
        case checkRequest
        /// Read the job again and check its new dependencies (after a wait: they may have
        /// changed meanwhile), and with `claim` that no other node started it meanwhile
        /// (after the probe, just before its bytes are changed); then look again.
        case recheck(claim: Bool)
        /// Stop the job's run (it checkpoints), then wait for it and look again.
        case stopRun
        /// Wait for the run that is ending, then look again: the checkpoint judged below
        /// must be the newest, never one the run is about to overwrite.
        case waitForRun
        /// Read the bytes on disk (the checkpoint) and tell `bytesRead(any:)`, which says
        /// whether the new URL is probed against them (`probed(_:)` gets the answer).
        case readBytes
        /// Write the new values (and the checkpoint the probe decided).
        case apply
    }

    enum Refusal: Equatable {
        /// 404: there is no such job (any more).
        case gone
        /// 409: a completed job is what it is.
        case completed
        /// 409: another node runs it; only what needs no stop may change.
        case runningElsewhere
        /// 409 `remote_changed`: with `keepBytes`, the new URL could not be probed, so it
        /// cannot be known to serve the same file.
        case newURLUnprobed
        /// 409 `remote_changed`: with `keepBytes`, the new URL serves another file.
        case newURLServesAnotherFile
    }

    /// What the probe of the new URL found.
    enum Probe: Equatable {
        /// The same file (same length, same strong validator), at `finalURL` after redirects.
        case sameFile(finalURL: String?)
        /// Another file.
        case otherFile
        /// No answer (a timeout, a 5xx): the bytes are kept and the download's `If-Range`
        /// judges them when it resumes.
        case unknown
    }

    /// What becomes of the bytes on disk when the new values are written.
    enum Bytes: Equatable {
        /// Untouched (no new URL, or nothing on disk).
        case unchanged
        /// Kept, the checkpoint now the new URL's (at `finalURL`, when the probe found it).
        case moved(finalURL: String?)
        /// Dropped: the job starts over.
        case dropped
    }

    /// URL, headers, connections, name or proxy change: a run must stop and start again.
    let changesTheDownload: Bool
    /// The URL changes: the bytes on disk are judged against it.
    let changesTheURL: Bool
    /// The bytes must be kept or the edit refused.
    let keepBytes: Bool
    private var looked = false
    /// A wait or the probe has ended: the job is read again first (`recheck`).
    private var pendingRecheck: Bool?
    private var stopped = false
    private var waited = false
    private var bytesChecked = false
    private(set) var bytes = Bytes.unchanged

    init(changesTheDownload: Bool, changesTheURL: Bool, keepBytes: Bool) {
        self.changesTheDownload = changesTheDownload || changesTheURL
        self.changesTheURL = changesTheURL
        self.keepBytes = keepBytes
    }

    /// The next step, from what the scheduler sees now.
    mutating func next(_ sight: Sight) -> Step {
        guard let state = sight.state else { return .refuse(.gone) }
        guard state != .completed else { return .refuse(.completed) }
        if let claim = pendingRecheck {
            pendingRecheck = nil
            return .recheck(claim: claim)
        }
        if !looked {
            looked = true
            // Another node's run is that node's to stop (a pause first).
            if changesTheDownload, state == .running, sight.claim == .otherNode { return .refuse(.runningElsewhere) }
            return .checkRequest
        }
        if changesTheDownload {
            if !stopped, !waited, sight.run == .running {
                stopped = true
                return .stopRun
            }
            if !waited, sight.run != .none {
                waited = true
                pendingRecheck = false
                return .waitForRun
            }
        }
        if changesTheURL, !bytesChecked { return .readBytes }
        return .apply
    }

    /// The checkpoint was read (`any`: it holds bytes); returns whether to probe the new URL.
    mutating func bytesRead(any: Bool) -> Bool {
        bytesChecked = true
        return any
    }

    /// The probe's answer; then, unless refused, `next` again with what the scheduler sees
    /// after the probe's wait (the job may have been deleted or taken meanwhile).
    mutating func probed(_ probe: Probe) -> Step? {
        pendingRecheck = true
        switch probe {
        case .sameFile(let finalURL):
            bytes = .moved(finalURL: finalURL)
        case .unknown:
            if keepBytes { return .refuse(.newURLUnprobed) }
            bytes = .moved(finalURL: nil)
        case .otherFile:
            if keepBytes { return .refuse(.newURLServesAnotherFile) }
            bytes = .dropped
        }
        return nil
    }

    /// What becomes of a job after an edit, applied or refused.
    enum Afterwards: Equatable {
        /// Nothing: it does not run here, or its run goes on.
        case nothing
        /// Its run was stopped by the edit: it starts again (under the new values).
        case restart
        /// It waits for jobs that are not complete: back to the queue.
        case requeue
    }

    /// A running job whose run the edit stopped goes on (after it has ended, when it still
    /// ends), unless it must now wait for other jobs; a cluster node does so only while it
    /// holds the lease.
    static func afterwards(_ sight: Sight, dependenciesComplete: Bool) -> Afterwards {
        guard sight.state == .running, sight.run != .running, sight.claim == .thisNode else { return .nothing }
        return dependenciesComplete ? .restart : .requeue
    }
}
