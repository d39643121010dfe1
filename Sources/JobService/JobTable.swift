public import SluiceCore
import Synchronization

/// The jobs a node holds: by id, by age, and counted by state.
///
/// The scheduler writes it; anyone reads it without waiting for the scheduler, so a read of
/// the API (`GET /jobs/ID`, `GET /jobs`, `GET /queue`) is answered at memory speed even while
/// the scheduler waits on its store. Every operation takes a lock for O(1) work (listing
/// walks the jobs it returns and those its filter skips).
public final class JobTable: Sendable {
    struct Storage {
        /// Each job and where it stands in `ids`.
        var byID: [String: (job: JobSnapshot, position: Int)] = [:]
        /// Oldest first; nil where a job was removed (compacted when they are many).
        var ids: [String?] = []
        var holes = 0
        var counts: [JobState: Int] = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })

        mutating func set(_ job: JobSnapshot) {
            if let old = byID[job.id] {
                counts[old.job.state, default: 0] -= 1
                byID[job.id] = (job, old.position)
            } else {
                byID[job.id] = (job, ids.count)
                ids.append(job.id)
            }
            counts[job.state, default: 0] += 1
        }

        mutating func remove(_ id: String) {
            guard let old = byID.removeValue(forKey: id) else { return }
            counts[old.job.state, default: 0] -= 1
            ids[old.position] = nil
            holes += 1
            if holes > 1024, holes * 2 > ids.count { compact() }
        }

        /// Inserts a job made elsewhere (another node) by its age, not at the end.
        mutating func insertByAge(_ job: JobSnapshot) {
            if byID[job.id] != nil { return set(job) }
            let newest = ids.last(where: { $0 != nil }).flatMap { $0 }.flatMap { byID[$0]?.job.createdAt }
            guard let newest, job.createdAt < newest else { return set(job) }
            compact()
            let index = ids.firstIndex { byID[$0!]!.job.createdAt > job.createdAt } ?? ids.count
            ids.insert(job.id, at: index)
            byID[job.id] = (job, index)
            counts[job.state, default: 0] += 1
            for position in (index + 1)..<ids.count { byID[ids[position]!]!.position = position }
        }

        mutating func compact() {
            guard holes > 0 else { return }
            ids = ids.filter { $0 != nil }
            holes = 0
            for (position, id) in ids.enumerated() { byID[id!]!.position = position }
        }
    }

    private let storage = Mutex(Storage())

    public init() {}

    public subscript(id: String) -> JobSnapshot? {
        get { storage.withLock { $0.byID[id]?.job } }
        set {
            storage.withLock { storage in
                if let newValue { storage.set(newValue) } else { storage.remove(id) }
            }
        }
    }

    /// Adds a job another node made, in its place by age.
    public func insertByAge(_ job: JobSnapshot) { storage.withLock { $0.insertByAge(job) } }

    public var count: Int { storage.withLock { $0.byID.count } }

    /// Every id, oldest first.
    public var orderedIDs: [String] { storage.withLock { $0.ids.compactMap { $0 } } }

    /// Every job, oldest first.
    public var ordered: [JobSnapshot] { storage.withLock { storage in storage.ids.compactMap { $0.flatMap { storage.byID[$0]?.job } } } }

    /// A job's place by age: larger is newer (for ordering, not counting).
    public func position(of id: String) -> Int? { storage.withLock { $0.byID[id]?.position } }

    public func countsByState() -> [JobState: Int] { storage.withLock { $0.counts } }

    /// Newest first, optionally filtered by state, `limit` jobs after the job `after`; nil
    /// when `after` names no job.
    public func list(states: Set<JobState>?, limit: Int, after: String?) -> [JobSnapshot]? {
        storage.withLock { storage in
            var index = storage.ids.count - 1
            if let after {
                guard let position = storage.byID[after]?.position else { return nil }
                index = position - 1
            }
            var result: [JobSnapshot] = []
            while index >= 0, result.count < limit {
                defer { index -= 1 }
                guard let id = storage.ids[index], let job = storage.byID[id]?.job else { continue }
                if let states, !states.contains(job.state) { continue }
                result.append(job)
            }
            return result
        }
    }

    /// At most `limit` jobs, live ones (`running`, `queued`, `paused`) first, then the newest
    /// others; oldest first.
    public func snapshot(limit: Int) -> [JobSnapshot] {
        storage.withLock { storage in
            let live: Set<JobState> = [.running, .queued, .paused]
            var chosen: [(position: Int, job: JobSnapshot)] = []
            var others: [(position: Int, job: JobSnapshot)] = []
            for position in storage.ids.indices.reversed() {
                guard let id = storage.ids[position], let job = storage.byID[id]?.job else { continue }
                if live.contains(job.state) {
                    if chosen.count < limit { chosen.append((position, job)) }
                } else if others.count < limit {
                    others.append((position, job))
                }
                if chosen.count == limit { break }
            }
            chosen += others.prefix(limit - chosen.count)
            return chosen.sorted { $0.position < $1.position }.map(\.job)
        }
    }
}
