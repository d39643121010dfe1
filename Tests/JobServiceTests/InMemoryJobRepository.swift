import DownloadEngine
import Foundation
import JobService
import SluiceCore
import Synchronization
import Testing

/// A job store in memory, for the job service's tests: the same contract as SQLite's and
/// PostgreSQL's (`JobRepositoryConformanceTests` runs it against all three), every call
/// counted, and a switch that makes every call wait as a frozen database does.
final class InMemoryJobRepository: JobRepository {
    struct Storage {
        var jobs: [(job: JobSnapshot, checkpoint: DownloadCheckpoint?)] = []
        var keys: [String: (id: String, at: Date, request: String?)] = [:]
        var settings: QueueSettings?
        var schedule: String?
        var quota: String?
        var deliveries: [WebhookDelivery] = []
        var calls: [String: Int] = [:]
    }

    private let storage = Mutex(Storage())
    /// While set, every call waits until it is cleared (a stalled store).
    private let frozen = Mutex(false)
    /// Calls waiting on the frozen store now.
    private let waitingCalls = Mutex(0)
    var waiting: Int { waitingCalls.withLock { $0 } }

    /// How many times each call was made, by name (`insert`, `update`, `checkpoint`…).
    var calls: [String: Int] { storage.withLock { $0.calls } }

    func freeze() { frozen.withLock { $0 = true } }
    /// While set, every call fails at once as a store that refuses connections does.
    private let failing = Mutex(false)
    func fail(_ fails: Bool) { failing.withLock { $0 = fails } }
    func thaw() { frozen.withLock { $0 = false } }

    /// While set, a save of a placement intent waits: the store stalls just as a run, its
    /// file verified, is about to place it.
    private let placementsHeld = Mutex(false)
    func holdPlacements() { placementsHeld.withLock { $0 = true } }
    func releasePlacements() { placementsHeld.withLock { $0 = false } }

    /// While set, a removal of many jobs at once waits (a bulk delete's page).
    private let bulkDeletesHeld = Mutex(false)
    func holdBulkDeletes() { bulkDeletesHeld.withLock { $0 = true } }
    func releaseBulkDeletes() { bulkDeletesHeld.withLock { $0 = false } }

    /// Waits while `held`, for at most a minute: a test that fails before it lets the store
    /// go records it here and goes on, where it would hang the whole test run.
    private func waitWhile(_ held: borrowing Mutex<Bool>) async {
        guard held.withLock({ $0 }) else { return }
        waitingCalls.withLock { $0 += 1 }
        let deadline = ContinuousClock.now + .seconds(60)
        while held.withLock({ $0 }) {
            guard ContinuousClock.now < deadline else {
                Issue.record("a store call was held for a minute: the test never let it go")
                break
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        waitingCalls.withLock { $0 -= 1 }
    }

    private func call<T>(_ name: String, _ body: (inout Storage) throws -> T) async throws -> T {
        await waitWhile(frozen)
        if failing.withLock({ $0 }) { throw SluiceError(.storeUnavailable, "the in-memory store is failing") }
        return try storage.withLock { storage in
            storage.calls[name, default: 0] += 1
            return try body(&storage)
        }
    }

    func allJobs() async throws -> [JobSnapshot] { try await call("allJobs") { $0.jobs.map(\.job) } }

    func job(id: String) async throws -> JobSnapshot? { try await call("job") { $0.jobs.first { $0.job.id == id }?.job } }

    func liveJobs() async throws -> [JobSnapshot] {
        try await call("liveJobs") { $0.jobs.map(\.job).filter { [.queued, .running, .paused].contains($0.state) } }
    }

    func page(states: Set<JobState>, limit: Int, before: String?) async throws -> [JobSnapshot]? {
        try await page(states: states, limit: limit, before: before, offset: 0)
    }

    func page(states: Set<JobState>, limit: Int, before: String?, offset: Int) async throws -> [JobSnapshot]? {
        try await call("page") { storage in
            var end = storage.jobs.count
            if let before {
                guard let index = storage.jobs.firstIndex(where: { $0.job.id == before }) else { return nil }
                end = index
            }
            return Array(storage.jobs[..<end].reversed().map(\.job).filter { states.contains($0.state) }.dropFirst(offset).prefix(limit))
        }
    }

    func countsByState() async throws -> [JobState: Int] {
        try await call("countsByState") { storage in Dictionary(grouping: storage.jobs, by: \.job.state).mapValues(\.count) }
    }

    func insert(_ job: JobSnapshot, idempotencyKey: String?, request: String?) async throws {
        try await call("insert") { storage in
            guard !storage.jobs.contains(where: { $0.job.id == job.id }) else {
                throw SluiceError(.invalidField, "job \(job.id) exists")
            }
            storage.jobs.append((job, nil))
            if let idempotencyKey {
                let now = job.createdAt
                storage.keys = storage.keys.filter { now.timeIntervalSince($0.value.at) < IdempotencyKey.lifetime }
                storage.keys[idempotencyKey] = (job.id, now, request)
            }
        }
    }

    func insert(_ jobs: [JobSnapshot]) async throws {
        try await call("insert") { storage in
            let ids = Set(storage.jobs.map(\.job.id))
            guard !jobs.contains(where: { ids.contains($0.id) }) else { throw SluiceError(.invalidField, "a job exists") }
            storage.jobs += jobs.map { ($0, nil) }
        }
    }

    func idempotentCreate(key: String, since: Date) async throws -> IdempotentCreate? {
        try await call("idempotentCreate") { storage in
            storage.keys[key].flatMap { $0.at >= since ? IdempotentCreate(jobID: $0.id, request: $0.request) : nil }
        }
    }

    func queueSettings() async throws -> QueueSettings? { try await call("queueSettings") { $0.settings } }
    func saveQueueSettings(_ settings: QueueSettings) async throws { try await call("saveQueueSettings") { $0.settings = settings } }
    func scheduleText() async throws -> String? { try await call("scheduleText") { $0.schedule } }
    func saveScheduleText(_ text: String) async throws { try await call("saveScheduleText") { $0.schedule = text } }
    func quotaText() async throws -> String? { try await call("quotaText") { $0.quota } }
    func updateQuotaText(_ update: @escaping @Sendable (String?) -> String) async throws -> String {
        try await call("updateQuotaText") { storage in
            storage.quota = update(storage.quota)
            return storage.quota!
        }
    }

    func update(_ job: JobSnapshot) async throws {
        try await call("update") { storage in
            guard let index = storage.jobs.firstIndex(where: { $0.job.id == job.id }) else { return }
            storage.jobs[index].job = job
        }
    }

    func delete(id: String, deliveries: [WebhookDelivery]) async throws {
        try await call("delete") { storage in
            storage.jobs.removeAll { $0.job.id == id }
            storage.deliveries += deliveries
        }
    }

    func delete(ids: [String], deliveries: [WebhookDelivery]) async throws {
        await waitWhile(bulkDeletesHeld)
        try await call("deleteMany") { storage in
            let gone = Set(ids)
            storage.jobs.removeAll { gone.contains($0.job.id) }
            storage.deliveries += deliveries
        }
    }

    func checkpoint(id: String) async throws -> DownloadCheckpoint? {
        try await call("checkpoint") { storage in storage.jobs.first { $0.job.id == id }?.checkpoint }
    }

    func saveCheckpoint(_ checkpoint: DownloadCheckpoint?, id: String) async throws {
        try await saveCheckpoints([CheckpointWrite(id: id, checkpoint: checkpoint)])
    }

    func saveCheckpoints(_ writes: [CheckpointWrite]) async throws {
        if writes.contains(where: { $0.checkpoint?.placement != nil }) { await waitWhile(placementsHeld) }
        try await call("saveCheckpoints") { storage in
            for write in writes {
                guard let index = storage.jobs.firstIndex(where: { $0.job.id == write.id }) else { continue }
                storage.jobs[index].checkpoint = write.checkpoint
                if let checkpoint = write.checkpoint {
                    storage.jobs[index].job.bytesDone = checkpoint.writtenBytes
                    if let total = checkpoint.totalBytes { storage.jobs[index].job.bytesTotal = total }
                }
            }
        }
    }

    func saveDeliveries(_ deliveries: [WebhookDelivery]) async throws {
        try await call("saveDeliveries") { storage in
            for delivery in deliveries {
                if let index = storage.deliveries.firstIndex(where: { $0.id == delivery.id }) {
                    storage.deliveries[index] = delivery
                } else {
                    storage.deliveries.append(delivery)
                }
            }
        }
    }

    func pendingDeliveries() async throws -> [WebhookDelivery] {
        try await call("pendingDeliveries") { storage in
            storage.deliveries.filter { $0.state == .pending }
                .sorted { ($0.nextAttemptAt ?? .distantPast, $0.createdAt) < ($1.nextAttemptAt ?? .distantPast, $1.createdAt) }
        }
    }

    func forgetDeliveries(ofRemovedJob jobID: String) async throws {
        try await call("forgetDeliveries") { storage in
            guard !storage.deliveries.contains(where: { $0.jobID == jobID && $0.state == .pending }),
                !storage.jobs.contains(where: { $0.job.id == jobID })
            else { return }
            storage.deliveries.removeAll { $0.jobID == jobID }
        }
    }

    func forgetDeliveries(settledBefore cutoff: Date) async throws -> Int {
        try await call("forgetDeliveries") { storage in
            let before = storage.deliveries.count
            storage.deliveries.removeAll { $0.state != .pending && $0.createdAt < cutoff }
            return before - storage.deliveries.count
        }
    }

    func deliveryReceivers() async throws -> [String] {
        try await call("deliveryReceivers") { storage in
            Array(Set(storage.deliveries.filter { $0.state == .pending }.map(\.receiver)))
        }
    }

    func dueDeliveries(receiver: String, now: Date, excludingJobs: [String], limit: Int) async throws -> [WebhookDelivery] {
        try await call("dueDeliveries") { storage in
            Array(
                storage.deliveries.filter {
                    $0.state == .pending && $0.receiver == receiver && ($0.nextAttemptAt ?? $0.createdAt) <= now
                        && !excludingJobs.contains($0.jobID)
                }
                .sorted { ($0.nextAttemptAt ?? $0.createdAt, $0.createdAt) < ($1.nextAttemptAt ?? $1.createdAt, $1.createdAt) }
                .prefix(limit))
        }
    }

    func nextDeliveryAttempt(receiver: String) async throws -> Date? {
        try await call("nextDeliveryAttempt") { storage in
            storage.deliveries.filter { $0.state == .pending && $0.receiver == receiver }.map { $0.nextAttemptAt ?? $0.createdAt }.min()
        }
    }

    func deliveries(jobID: String) async throws -> [WebhookDelivery] {
        try await call("deliveries") { storage in
            storage.deliveries.filter { $0.jobID == jobID }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    func ping() async throws { try await call("ping") { _ in } }
}
