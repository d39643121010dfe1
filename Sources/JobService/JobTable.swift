public import Foundation
public import SluiceCore
import Synchronization

/// The jobs a node holds: by id, by age, and counted by state.
///
/// The scheduler writes it; anyone reads it without waiting for the scheduler, so a read of
/// the API (`GET /jobs/ID`, `GET /jobs`, `GET /queue`) is answered at memory speed even while
/// the scheduler waits on its store. Every operation takes a lock for O(1) or O(log n) work;
/// a page of one state is read from that state's own index, whatever the other states hold.
public final class JobTable: Sendable {
    struct Storage {
        /// Each job and where it stands in `ids`.
        var byID: [String: (job: JobSnapshot, position: Int)] = [:]
        /// Oldest first; nil where a job was removed (compacted when they are many).
        var ids: [String?] = []
        var holes = 0
        var counts: [JobState: Int] = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })
        /// The positions of each state's jobs, ascending.
        var byState: [JobState: [Int]] = [:]
        /// Jobs that wait for others or are waited for by their `after` (dependency rules
        /// look at these only).
        var dependent: Set<String> = []
        /// Queued jobs waiting for an instant: a `Retry-After`'s end, or their `startAt`.
        var retrying: Set<String> = []
        /// The positions of queued jobs free to start (no `Retry-After`, nothing to wait for),
        /// ascending, by priority: the queue's next starts are read from their heads, not
        /// from every queued job.
        var ready: [Int: [Int]] = [:]
        /// Finished jobs the store holds and this table does not (a single node keeps only
        /// live jobs): counted, not held.
        var storedOnly: [JobState: Int] = [:]

        static func isReady(_ job: JobSnapshot) -> Bool {
            job.state == .queued && job.retryAt == nil && job.startAt == nil && job.waitingFor.isEmpty
        }

        /// A queued job that waits for an instant (`retrying`).
        static func isTimed(_ job: JobSnapshot) -> Bool {
            job.state == .queued && (job.retryAt != nil || job.startAt != nil)
        }

        mutating func unready(_ position: Int, priority: Int) {
            Self.remove(position, from: &ready[priority, default: []])
            if ready[priority]?.isEmpty == true { ready[priority] = nil }
        }

        mutating func set(_ job: JobSnapshot) {
            if Self.isTimed(job) {
                retrying.insert(job.id)
            } else {
                retrying.remove(job.id)
            }
            if job.after.isEmpty && job.waitingFor.isEmpty {
                dependent.remove(job.id)
            } else {
                dependent.insert(job.id)
            }
            if let old = byID[job.id] {
                counts[old.job.state, default: 0] -= 1
                byID[job.id] = (job, old.position)
                if old.job.state != job.state {
                    Self.remove(old.position, from: &byState[old.job.state, default: []])
                    Self.insert(old.position, into: &byState[job.state, default: []])
                }
                let (was, now) = (Self.isReady(old.job), Self.isReady(job))
                if was && (!now || old.job.priority != job.priority) { unready(old.position, priority: old.job.priority) }
                if now && (!was || old.job.priority != job.priority) { Self.insert(old.position, into: &ready[job.priority, default: []]) }
            } else {
                if Self.isReady(job) { ready[job.priority, default: []].append(ids.count) }
                byID[job.id] = (job, ids.count)
                byState[job.state, default: []].append(ids.count)
                ids.append(job.id)
            }
            counts[job.state, default: 0] += 1
        }

        mutating func remove(_ id: String) {
            guard let old = byID.removeValue(forKey: id) else { return }
            dependent.remove(id)
            retrying.remove(id)
            counts[old.job.state, default: 0] -= 1
            Self.remove(old.position, from: &byState[old.job.state, default: []])
            if Self.isReady(old.job) { unready(old.position, priority: old.job.priority) }
            ids[old.position] = nil
            holes += 1
            if holes > 1024, holes * 2 > ids.count { compact() }
        }

        /// Inserts a job made elsewhere (another node) by its age, not at the end: found from
        /// the newest end (such a job is usually recent), only the positions after it moved.
        mutating func insertByAge(_ job: JobSnapshot) {
            if byID[job.id] != nil { return set(job) }
            if !job.after.isEmpty || !job.waitingFor.isEmpty { dependent.insert(job.id) }
            if Self.isTimed(job) { retrying.insert(job.id) }
            var index = ids.count
            while index > 0 {
                if let id = ids[index - 1], let other = byID[id], other.job.createdAt <= job.createdAt { break }
                index -= 1
            }
            ids.insert(job.id, at: index)
            for position in (index + 1)..<ids.count {
                if let id = ids[position] { byID[id]!.position = position }
            }
            for state in Array(byState.keys) {
                guard let positions = byState[state], let last = positions.last, last >= index else { continue }
                byState[state] = positions.map { $0 >= index ? $0 + 1 : $0 }
            }
            for priority in Array(ready.keys) {
                guard let positions = ready[priority], let last = positions.last, last >= index else { continue }
                ready[priority] = positions.map { $0 >= index ? $0 + 1 : $0 }
            }
            byID[job.id] = (job, index)
            Self.insert(index, into: &byState[job.state, default: []])
            if Self.isReady(job) { Self.insert(index, into: &ready[job.priority, default: []]) }
            counts[job.state, default: 0] += 1
        }

        /// Inserts many jobs by age at once: one merge and one pass over the positions, where
        /// inserting them one by one moved every position after each (a bulk action over a
        /// million stored jobs was quadratic).
        mutating func insertAllByAge(_ jobs: [JobSnapshot]) {
            var seen = Set<String>()
            let fresh = jobs.filter { byID[$0.id] == nil && seen.insert($0.id).inserted }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            guard !fresh.isEmpty else { return }
            var merged: [String?] = []
            merged.reserveCapacity(ids.count - holes + fresh.count)
            var next = 0
            for case let id? in ids {
                let date = byID[id]!.job.createdAt
                // After the held jobs of the same date, as `insertByAge` places one.
                while next < fresh.count, fresh[next].createdAt < date {
                    merged.append(fresh[next].id)
                    next += 1
                }
                merged.append(id)
            }
            merged += fresh[next...].map(\.id)
            for job in fresh {
                byID[job.id] = (job, 0)
                counts[job.state, default: 0] += 1
                if !job.after.isEmpty || !job.waitingFor.isEmpty { dependent.insert(job.id) }
                if Self.isTimed(job) { retrying.insert(job.id) }
            }
            ids = merged
            holes = 0
            for (position, id) in ids.enumerated() { byID[id!]!.position = position }
            indexStates()
        }

        mutating func compact() {
            guard holes > 0 else { return }
            ids = ids.filter { $0 != nil }
            holes = 0
            for (position, id) in ids.enumerated() { byID[id!]!.position = position }
            indexStates()
        }

        /// The state index made again from `ids` (after positions moved).
        mutating func indexStates() {
            byState = [:]
            ready = [:]
            for (position, id) in ids.enumerated() {
                guard let id, let job = byID[id]?.job else { continue }
                byState[job.state, default: []].append(position)
                if Self.isReady(job) { ready[job.priority, default: []].append(position) }
            }
        }

        /// The index of the first element of `sorted` that is not below `value`.
        static func lowerBound(_ value: Int, in sorted: [Int]) -> Int {
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < value { low = middle + 1 } else { high = middle }
            }
            return low
        }

        static func insert(_ position: Int, into sorted: inout [Int]) {
            if let last = sorted.last, last < position { return sorted.append(position) }
            sorted.insert(position, at: lowerBound(position, in: sorted))
        }

        static func remove(_ position: Int, from sorted: inout [Int]) {
            let index = lowerBound(position, in: sorted)
            if index < sorted.count, sorted[index] == position { sorted.remove(at: index) }
        }

        /// Newest first, the jobs of `states` below position `bound`, past the first `skip` of
        /// them: each state's index read from its end, merged.
        func page(states: Set<JobState>, below bound: Int, limit: Int, skip: Int = 0) -> [JobSnapshot] {
            var heads = states.compactMap { state -> (positions: [Int], next: Int)? in
                guard let positions = byState[state], !positions.isEmpty else { return nil }
                return (positions, Self.lowerBound(bound, in: positions) - 1)
            }
            var result: [JobSnapshot] = []
            var skipped = 0
            if heads.count == 1 {
                // One state: its index is the page, skipped by arithmetic.
                skipped = min(skip, heads[0].next + 1)
                heads[0].next -= skipped
            }
            while result.count < limit {
                guard
                    let best = heads.indices.filter({ heads[$0].next >= 0 }).max(by: {
                        heads[$0].positions[heads[$0].next] < heads[$1].positions[heads[$1].next]
                    })
                else { break }
                let position = heads[best].positions[heads[best].next]
                heads[best].next -= 1
                // A state index holds only held jobs' positions: a skipped one is not looked up.
                if skipped < skip {
                    skipped += 1
                } else if let id = ids[position], let job = byID[id]?.job {
                    result.append(job)
                }
            }
            return result
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

    /// Adds jobs, oldest first, under one lock (a start loading the store).
    public func load(_ loaded: [JobSnapshot]) {
        storage.withLock { storage in
            storage.byID.reserveCapacity(storage.byID.count + loaded.count)
            storage.ids.reserveCapacity(storage.ids.count + loaded.count)
            for job in loaded { storage.set(job) }
        }
    }

    /// Adds a job another node made, in its place by age.
    public func insertByAge(_ job: JobSnapshot) { storage.withLock { $0.insertByAge(job) } }

    public var count: Int { storage.withLock { $0.byID.count } }

    /// Every id, oldest first.
    public var orderedIDs: [String] { storage.withLock { $0.ids.compactMap { $0 } } }

    /// A job's place by age: larger is newer (for ordering, not counting).
    public func position(of id: String) -> Int? { storage.withLock { $0.byID[id]?.position } }

    /// Every job's state counted: those held and the finished ones left to the store.
    public func countsByState() -> [JobState: Int] {
        storage.withLock { storage in storage.counts.merging(storage.storedOnly, uniquingKeysWith: +) }
    }

    /// How many jobs of `states` the store holds that this table does not: none means a read
    /// need not ask the store.
    public func storedOnly(in states: Set<JobState>) -> Int {
        storage.withLock { storage in states.reduce(0) { $0 + (storage.storedOnly[$1] ?? 0) } }
    }

    /// How many finished jobs of each state the store holds beyond this table (at a start).
    public func setStoredOnly(_ counts: [JobState: Int]) { storage.withLock { $0.storedOnly = counts } }

    /// The held jobs' counts by state (not those left to the store).
    public func heldCounts() -> [JobState: Int] { storage.withLock { $0.counts } }

    /// A finished job leaves the table, counted as the store's: its state is stored.
    public func evict(_ id: String) {
        storage.withLock { storage in
            guard let job = storage.byID[id]?.job, !job.state.isLive else { return }
            storage.remove(id)
            storage.storedOnly[job.state, default: 0] += 1
        }
    }

    /// Finished jobs the store held alone were removed from it: no longer counted.
    public func forgetStored(_ removed: [JobSnapshot]) {
        storage.withLock { storage in
            for job in removed where storage.byID[job.id] == nil {
                storage.storedOnly[job.state] = max(0, (storage.storedOnly[job.state] ?? 0) - 1)
            }
        }
    }

    /// A finished job read back from the store for a command (a resume, a delete): held
    /// again, no longer counted as the store's alone.
    public func adopt(_ job: JobSnapshot) {
        storage.withLock { storage in
            guard storage.byID[job.id] == nil else { return }
            if !job.state.isLive, let count = storage.storedOnly[job.state], count > 0 { storage.storedOnly[job.state] = count - 1 }
            storage.insertByAge(job)
        }
    }

    /// Many finished jobs read back for a bulk action, placed by age in one pass.
    public func adopt(_ jobs: [JobSnapshot]) {
        storage.withLock { storage in
            var seen = Set<String>()
            for job in jobs where storage.byID[job.id] == nil && seen.insert(job.id).inserted && !job.state.isLive {
                if let count = storage.storedOnly[job.state], count > 0 { storage.storedOnly[job.state] = count - 1 }
            }
            storage.insertAllByAge(jobs)
        }
    }

    /// The jobs in `states`, oldest first, read from the state index.
    public func jobs(in states: Set<JobState>) -> [JobSnapshot] {
        storage.withLock { $0.page(states: states, below: $0.ids.count, limit: .max).reversed() }
    }

    /// The queued jobs that may start at `now` (nothing to wait for, no `Retry-After` still
    /// running), as the queue's plan takes them, oldest first: every one of them, or with
    /// `limit` at least the `limit` the plan would take first (the oldest of each priority,
    /// read from the ready index, and those whose `Retry-After` has passed), so that a
    /// schedule with a few free slots does not read a long queue.
    public func readyToStart(at now: Date, limit: Int = .max) -> [QueuePlan.Candidate] {
        storage.withLock { storage in
            var ready: [QueuePlan.Candidate] = []
            for (priority, positions) in storage.ready {
                for position in positions.prefix(limit) {
                    guard let id = storage.ids[position] else { continue }
                    ready.append(QueuePlan.Candidate(id: id, priority: priority, sequence: position))
                }
            }
            for id in storage.retrying {
                guard let entry = storage.byID[id], entry.job.waitingFor.isEmpty, let at = Self.instant(of: entry.job), at <= now
                else { continue }
                ready.append(QueuePlan.Candidate(id: id, priority: entry.job.priority, sequence: entry.position))
            }
            return ready.sorted { $0.sequence < $1.sequence }
        }
    }

    /// When the first queued job waiting out a `Retry-After` may go again.
    public var earliestRetry: Date? {
        storage.withLock { storage in storage.retrying.compactMap { storage.byID[$0].flatMap { Self.instant(of: $0.job) } }.min() }
    }

    /// When a timed job may start: the later of its `Retry-After`'s end and its `startAt`.
    static func instant(of job: JobSnapshot) -> Date? {
        switch (job.retryAt, job.startAt) {
        case (let retryAt?, let startAt?): max(retryAt, startAt)
        case (let one, let other): one ?? other
        }
    }

    /// Sets what holds each queued job back, in place, with no event: the queue's conditions
    /// changed (a window closed), or an instant passed.
    public func stampHolds(_ holds: QueueHolds, now: Date) {
        storage.withLock { storage in
            for position in storage.byState[.queued] ?? [] {
                guard let id = storage.ids[position], var entry = storage.byID[id] else { continue }
                let held = holds.heldBy(entry.job, now: now)
                guard held != entry.job.heldBy else { continue }
                entry.job.heldBy = held
                storage.byID[id] = entry
            }
        }
    }

    /// Whether a held job names `id` in its `after` (read from the dependent jobs only, with
    /// no copy or sort of them).
    public func isWaitedFor(_ id: String) -> Bool {
        storage.withLock { storage in storage.dependent.contains { storage.byID[$0]?.job.after.contains(id) == true } }
    }

    /// The jobs that have an `after` or a `waitingFor`, oldest first.
    public var withDependencies: [JobSnapshot] {
        storage.withLock { storage in
            storage.dependent.compactMap { storage.byID[$0] }.sorted { $0.position < $1.position }.map(\.job)
        }
    }

    /// Newest first, optionally filtered by state, `limit` jobs after the job `after` and
    /// past the first `offset` of them; nil when `after` names no job.
    public func list(states: Set<JobState>?, limit: Int, after: String?, offset: Int = 0) -> [JobSnapshot]? {
        storage.withLock { storage in
            var index = storage.ids.count - 1
            if let after {
                guard let position = storage.byID[after]?.position else { return nil }
                index = position - 1
            }
            if let states { return storage.page(states: states, below: index + 1, limit: limit, skip: offset) }
            var result: [JobSnapshot] = []
            var skipped = 0
            while index >= 0, result.count < limit {
                defer { index -= 1 }
                // A place holds a job (its id) or a hole (nil): a skipped job is not looked up.
                guard let id = storage.ids[index] else { continue }
                if skipped < offset {
                    skipped += 1
                } else if let job = storage.byID[id]?.job {
                    result.append(job)
                }
            }
            return result
        }
    }

    /// Newest first, `limit` queued jobs that `hold` holds back, after the job `after`; nil
    /// when `after` names no job. (Only queued jobs are held, and the table holds them all.)
    public func list(heldBy hold: JobHold, limit: Int, after: String?, offset: Int = 0) -> [JobSnapshot]? {
        storage.withLock { storage in
            var bound = Int.max
            if let after {
                guard let position = storage.byID[after]?.position else { return nil }
                bound = position
            }
            var result: [JobSnapshot] = []
            var skipped = 0
            for position in (storage.byState[.queued] ?? []).reversed() where position < bound {
                guard result.count < limit else { break }
                guard let id = storage.ids[position], let job = storage.byID[id]?.job, job.heldBy == hold else { continue }
                if skipped < offset {
                    skipped += 1
                } else {
                    result.append(job)
                }
            }
            return result
        }
    }

    /// Newest first, `limit` jobs of `states` made before `bound` (by creation date, then
    /// id): the table's part of a page whose cursor is a job the table does not hold. The
    /// table is in age order, so the bound is found by a binary search, and the page is read
    /// from the state indexes below it.
    public func list(states: Set<JobState>, limit: Int, madeBefore bound: (date: Date, id: String)) -> [JobSnapshot] {
        storage.withLock { storage in
            // The first position holding a job made at or after the bound's date.
            var low = 0
            var high = storage.ids.count
            while low < high {
                let middle = (low + high) / 2
                // A removed job's place: the nearest held one after it decides.
                var probe = middle
                while probe < high, storage.ids[probe] == nil { probe += 1 }
                guard probe < high, let id = storage.ids[probe], let job = storage.byID[id]?.job else {
                    high = middle
                    continue
                }
                if job.createdAt < bound.date { low = probe + 1 } else { high = middle }
            }
            // Jobs made at the bound's very date may still sort below it by id: look a little
            // past it, then keep exactly those below the bound.
            var end = low
            while end < storage.ids.count {
                if let id = storage.ids[end], let job = storage.byID[id]?.job, job.createdAt != bound.date { break }
                end += 1
            }
            return storage.page(states: states, below: end, limit: limit + (end - low)).filter { ($0.createdAt, $0.id) < bound }
                .prefix(limit).map { $0 }
        }
    }

    /// At most `limit` jobs, live ones (`running`, `queued`, `paused`) first, then the newest
    /// others; oldest first.
    public func snapshot(limit: Int) -> [JobSnapshot] {
        storage.withLock { storage in
            let live: Set<JobState> = [.running, .queued, .paused]
            var chosen = storage.page(states: live, below: storage.ids.count, limit: limit)
            if chosen.count < limit {
                chosen += storage.page(
                    states: Set(JobState.allCases).subtracting(live), below: storage.ids.count, limit: limit - chosen.count)
            }
            return chosen.sorted { storage.byID[$0.id]!.position < storage.byID[$1.id]!.position }
        }
    }

}
