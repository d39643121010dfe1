import Foundation
import SluiceCore

/// What a runner's start reads from its store: the queue's settings, the live jobs it holds
/// (finished ones stay in the store, counted), and the states of the finished jobs those
/// wait for (the dependency rules need them).
struct StoredStart {
    var settings: QueueSettings?
    /// The schedule (`PUT /schedule`), nil for none stored.
    var schedule: Schedule?
    /// The quotas and their counts, nil for none stored.
    var quota: QuotaLedger?
    /// How many of its own jobs a cluster node took back (left running by its previous
    /// process; the others' are theirs, or the rescuer's).
    var recovered: Int
    var live: [JobSnapshot]
    /// How many finished jobs each state holds in the store.
    var finishedCounts: [JobState: Int]
    var finishedDependencies: [String: JobState]

    static func read(_ repository: any JobRepository, cluster: (any ClusterStore)?) async throws -> StoredStart {
        let settings = try await repository.queueSettings()
        let schedule = try await repository.scheduleText().flatMap { text -> Schedule? in
            // One this system cannot read any more (a time zone gone from it) is none.
            guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else { return nil }
            return try? Schedule(json: json)
        }
        let quota = try await repository.quotaText().flatMap(QuotaLedger.init(storedText:))
        let recovered = try await cluster?.recoverOwnJobs() ?? []
        let live = try await repository.liveJobs()
        var counts = try await repository.countsByState()
        for state in JobState.live { counts[state] = nil }
        let held = Set(live.map(\.id))
        var finishedDependencies: [String: JobState] = [:]
        for dependency in Set(live.flatMap(\.after)) where !held.contains(dependency) {
            if let state = try await repository.job(id: dependency)?.state { finishedDependencies[dependency] = state }
        }
        return StoredStart(
            settings: settings, schedule: schedule, quota: quota, recovered: recovered.count, live: live, finishedCounts: counts,
            finishedDependencies: finishedDependencies)
    }

    /// A single node's start: the jobs left running when its last process stopped go back to
    /// the queue (`JobLifecycle.serviceStarted`). Returns the ids that changed, to store.
    mutating func requeueRunning() -> [String] {
        var requeued: [String] = []
        for index in live.indices {
            var lifecycle = JobLifecycle(state: live[index].state)
            guard lifecycle.serviceStarted() == .enqueue else { continue }
            if live[index].state != lifecycle.state { requeued.append(live[index].id) }
            live[index].state = lifecycle.state
            live[index].speed = 0
            live[index].eta = nil
        }
        return requeued
    }
}
