import Foundation
import SluiceCore

/// The job service's reads, answered from the job table without the runner's actor: at
/// once even while the runner waits on its store. What only the store has (a finished job)
/// is read within the request's budget; while the store is known not to answer, such a read
/// is refused at once (503).
struct JobReads: Sendable {
    let jobs: JobTable
    let repository: any JobRepository
    let events: JobEventBroadcaster
    /// What the service last saw of its store; nil to assume it answers.
    let storeHealth: StoreHealth?
    /// `Claiming.knowsEveryFinishedJob`.
    let knowsEveryFinishedJob: Bool

    var storeAnswers: Bool { storeHealth?.isAvailable ?? true }

    /// A job, live from the table or finished from the store.
    func job(id: String) async throws -> JobSnapshot? {
        if let job = jobs[id] { return job }
        return try await Self.readingStore(storeAnswers) { try await self.jobInPlace(id: id) }
    }

    /// `job(id:)` whatever the store's health (a command's own read).
    func jobInPlace(id: String) async throws -> JobSnapshot? {
        if let job = jobs[id] { return job }
        return try await storedFinishedJob(id)
    }

    /// Runs a read of the store; refused at once while it does not answer.
    static func readingStore<T: Sendable>(_ answers: Bool, _ read: () async throws -> T) async throws -> T {
        guard answers else {
            throw SluiceError(.storeUnavailable, "the job store is not answering: finished jobs cannot be read now (live ones can)")
        }
        return try await read()
    }

    /// A finished job the node left to its store, read from there; nil when the store has
    /// none. (A cluster node may not have heard of a job another node finished yet: it asks.)
    func storedFinishedJob(_ id: String) async throws -> JobSnapshot? {
        guard !knowsEveryFinishedJob || jobs.storedOnly(in: JobState.finished) > 0, let job = try await repository.job(id: id),
            !job.state.isLive
        else { return nil }
        return job
    }

    /// Newest first, optionally filtered by state, `limit` jobs after the job `after`.
    ///
    /// A node holds live jobs only: a page that may hold finished ones merges the table's
    /// page with the store's (read from its state index), by creation date.
    func list(
        states: Set<JobState>? = nil, limit: Int = 100, after: String? = nil, offset: Int = 0
    ) async throws -> [JobSnapshot] {
        guard tableAnswersAlone(states) else {
            return try await Self.readingStore(storeAnswers) {
                try await self.listInPlace(states: states, limit: limit, after: after, offset: offset)
            }
        }
        return try await listInPlace(states: states, limit: limit, after: after, offset: offset)
    }

    /// Whether the table holds every job of `states` (none of them left to the store).
    func tableAnswersAlone(_ states: Set<JobState>?) -> Bool {
        let stored = (states ?? Set(JobState.allCases)).intersection(JobState.finished)
        return stored.isEmpty || jobs.storedOnly(in: stored) == 0
    }

    /// `list` on the calling thread.
    func listInPlace(
        states: Set<JobState>? = nil, limit: Int = 100, after: String? = nil, offset: Int = 0
    ) async throws -> [JobSnapshot] {
        let wanted = states ?? Set(JobState.allCases)
        let stored = wanted.intersection(JobState.finished)
        // Nothing of those states left to the store: the table answers alone.
        if tableAnswersAlone(states) {
            guard let page = jobs.list(states: states, limit: limit, after: after, offset: offset) else {
                throw SluiceError(.invalidField, "after names no job", field: "after")
            }
            return page
        }
        if offset > 0 { return try await storeOrderedPage(states: wanted, limit: limit, after: after, offset: offset) }
        var held: [JobSnapshot]
        if let after, jobs[after] != nil {
            held = jobs.list(states: wanted, limit: limit, after: after) ?? []
        } else if let after {
            guard let cursor = try await storedFinishedJob(after) else {
                throw SluiceError(.invalidField, "after names no job", field: "after")
            }
            held = jobs.list(states: wanted, limit: limit, madeBefore: (cursor.createdAt, cursor.id))
        } else {
            held = jobs.list(states: wanted, limit: limit, after: nil) ?? []
        }
        // The store's page of finished jobs, below the same cursor (every job is stored).
        let fromStore = try await repository.page(states: stored, limit: limit, before: after) ?? []
        let heldIDs = Set(held.map(\.id))
        held += fromStore.filter { !heldIDs.contains($0.id) }
        return Array(held.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.prefix(limit))
    }

    /// A page far into a list that the table and the store share: its place is counted in the
    /// store, which holds every job, and each job the table holds is shown as the table has it
    /// (a live job's stored row may lag its last change). One the table has moved to another
    /// state since is left out, so such a page may be short by the jobs changing as it is read.
    func storeOrderedPage(states: Set<JobState>, limit: Int, after: String?, offset: Int) async throws -> [JobSnapshot] {
        guard let page = try await repository.page(states: states, limit: limit, before: after, offset: offset) else {
            throw SluiceError(.invalidField, "after names no job", field: "after")
        }
        return page.compactMap { row in
            guard let held = jobs[row.id] else { return row }
            return states.contains(held.state) ? held : nil
        }
    }

    /// At most this many jobs in an event stream's first snapshot (docs/api.md, "Events").
    static let snapshotLimit = 1000

    /// What a new event stream sends first, then what changes after it, with no gap between
    /// the two: the events a client missed since `lastEventID` when the journal still has
    /// them; else (`reset` when it named an id) a snapshot of the current jobs — the one job,
    /// or at most `snapshotLimit`, chosen live ones first, then the newest.
    ///
    /// Not isolated: a subscriber first, then the snapshot, so an event between the two is
    /// sent after a snapshot that may already show it (sent again, never missed).
    func subscribe(jobID: String? = nil, lastEventID: String? = nil) async throws -> JobSubscription {
        // One job held, or every job with none left to the store: from memory alone.
        if let jobID, jobs[jobID] != nil { return try await subscribeInPlace(jobID: jobID, lastEventID: lastEventID) }
        if jobID == nil, tableAnswersAlone(nil) { return try await subscribeInPlace(jobID: nil, lastEventID: lastEventID) }
        // A stream of all jobs starts without the finished ones while the store does not answer.
        let answers = storeAnswers || jobID == nil
        return try await Self.readingStore(answers) { try await self.subscribeInPlace(jobID: jobID, lastEventID: lastEventID) }
    }

    /// `subscribe` whatever the store's health.
    func subscribeInPlace(jobID: String? = nil, lastEventID: String? = nil) async throws -> JobSubscription {
        if let jobID, try await jobInPlace(id: jobID) == nil, lastEventID == nil { throw SluiceError(.notFound, "no job \(jobID)") }
        let (subscriber, missed) = events.subscribe(after: lastEventID)
        if let missed {
            let initial = jobID.map { id in missed.filter { $0.event.jobID == id } } ?? missed
            return JobSubscription(reset: false, initial: initial, changes: subscriber)
        }
        let exists = if let jobID { try await jobInPlace(id: jobID) != nil } else { true }
        guard exists else {
            subscriber.cancel()
            throw SluiceError(.notFound, "no job \(jobID ?? "")")
        }
        let current = events.currentID
        let snapshot: [JobSnapshot]
        if let jobID {
            guard let job = try await jobInPlace(id: jobID) else {
                subscriber.cancel()
                throw SluiceError(.notFound, "no job \(jobID)")
            }
            snapshot = [job]
        } else {
            // Chosen live first, then newest; sent oldest first, as the dashboard expects.
            var chosen = jobs.snapshot(limit: Self.snapshotLimit)
            // Room left: the newest finished jobs the node left to its store.
            if chosen.count < Self.snapshotLimit, jobs.storedOnly(in: JobState.finished) > 0, storeAnswers,
                let stored = try? await repository.page(states: JobState.finished, limit: Self.snapshotLimit - chosen.count, before: nil)
            {
                let held = Set(chosen.map(\.id))
                chosen = (chosen + stored.filter { !held.contains($0.id) }).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            }
            snapshot = chosen
        }
        return JobSubscription(
            reset: lastEventID != nil, initial: snapshot.map { JobEventMessage(.job($0), id: current) }, changes: subscriber
        )
    }
}
