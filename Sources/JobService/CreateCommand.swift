import DownloadEngine
import Foundation
import SluiceCore
import SluiceSystem

/// Creating jobs on the runner's actor: one (`POST /jobs`, with or without an idempotency
/// key) or a batch (`POST /jobs/batch`).
enum CreateCommand {
    /// Creates a job. With an idempotency key that made a job in the last day from the same
    /// request, that job is returned instead (`replayed`), and nothing is created; the same
    /// key with another request is refused (422 `idempotency_key_reused`), as the IETF's
    /// Idempotency-Key draft and Stripe do.
    static func create(
        _ request: CreateJobRequest, idempotencyKey: String?, on node: isolated JobScheduler
    ) async throws -> (job: JobSnapshot, replayed: Bool) {
        guard let idempotencyKey else { return (try await createNew(request, idempotencyKey: nil, on: node), false) }
        try IdempotencyKey.validate(idempotencyKey)
        let fingerprint = request.fingerprint
        // A create with the same key under way (a client's retry): its job, once made.
        if let underWay = node.creatingWithKey[idempotencyKey] {
            return (try await Self.replay(underWay, key: idempotencyKey, fingerprint: fingerprint), true)
        }
        let since = node.configuration.clock.now().addingTimeInterval(-IdempotencyKey.lifetime)
        // The job it made may have finished and left the table: the store has it then. A key
        // stored before requests were fingerprinted is taken as the same request.
        if let made = try await node.repository.idempotentCreate(key: idempotencyKey, since: since) {
            if let request = made.request, request != fingerprint { throw Self.reused(idempotencyKey, job: made.jobID) }
            if let job = node.jobs[made.jobID] { return (job, true) }
            if let job = try await node.storedFinishedJob(made.jobID) { return (job, true) }
        }
        if let underWay = node.creatingWithKey[idempotencyKey] {
            return (try await Self.replay(underWay, key: idempotencyKey, fingerprint: fingerprint), true)
        }
        let creating = Task { try await Self.createNew(request, idempotencyKey: idempotencyKey, fingerprint: fingerprint, on: node) }
        node.creatingWithKey[idempotencyKey] = (creating, fingerprint)
        defer { node.creatingWithKey[idempotencyKey] = nil }
        return (try await creating.value, false)
    }

    /// The job of a create under way with the same key, if it was the same request.
    static func replay(
        _ underWay: (task: Task<JobSnapshot, any Error>, request: String), key: String, fingerprint: String
    ) async throws -> JobSnapshot {
        guard underWay.request == fingerprint else { throw reused(key, job: nil) }
        return try await underWay.task.value
    }

    static func reused(_ key: String, job: String?) -> SluiceError {
        SluiceError(
            .idempotencyKeyReused,
            "Idempotency-Key \(key) was used \(job.map { "for job \($0)" } ?? "by a create under way") with a different request; a new request needs a new key",
            field: "Idempotency-Key"
        )
    }

    /// Makes the job (`create` has ruled out a replay).
    static func createNew(
        _ request: CreateJobRequest, idempotencyKey: String?, fingerprint: String? = nil, on node: isolated JobScheduler
    ) async throws -> JobSnapshot {
        do {
            return try await makeNew(request, idempotencyKey: idempotencyKey, fingerprint: fingerprint, on: node)
        } catch {
            // Refused: the states read for its `after` are not kept for a job never made.
            DependencyStates.forget(request.after, on: node)
            throw error
        }
    }

    private static func makeNew(
        _ request: CreateJobRequest, idempotencyKey: String?, fingerprint: String?, on node: isolated JobScheduler
    ) async throws -> JobSnapshot {
        var job = try await checkedJob(request, on: node)
        // Their states as the job is made: a finished one may leave the table while the store
        // inserts the job (nothing waits for it yet), and must not look deleted then.
        let dependencyStates = dependencyStates(of: [job], on: node)
        // A job that starts at once is stored running: one write, not a queued one and then
        // a running one. Its slot is kept for it while the store inserts it.
        if node.startsAtOnce(job) {
            var lifecycle = JobLifecycle(state: job.state)
            if lifecycle.slotGranted() == .startDownload { job.state = lifecycle.state }
        }
        let keepsSlot = job.state == .running
        if keepsSlot { node.startingInCreation += 1 }
        defer { if keepsSlot { node.startingInCreation -= 1 } }
        node.noteControlWrite(job.id)
        do {
            try await node.repository.insert(job, idempotencyKey: idempotencyKey, request: fingerprint)
        } catch let error as SluiceError where error.code == .storeUnavailable {
            // The answer is 503, so the job must never appear, though its row may still land
            // (a cluster's `COMMIT` may outlive the request's budget).
            node.book.abandon([job.id])
            throw error
        }
        // Stopping began while the store inserted it: it stays queued, for the next start.
        if keepsSlot, node.isShuttingDown { job.state = .queued }
        keepStates(dependencyStates, on: node)
        node.perform(node.machine.created(job))
        // A cluster node answers once its claim has taken the job, or not.
        if job.state == .queued { await ClusterClaims.claimed(on: node) }
        return node.jobs[job.id] ?? job
    }

    /// A request checked and made a job, not stored yet: what a create and a batch share. A
    /// literal address is refused before anything is stored; a name is checked on every
    /// connection, when it is resolved.
    static func checkedJob(_ request: CreateJobRequest, on node: isolated JobScheduler) async throws -> JobSnapshot {
        if let refusal = node.client.literalRefusal(for: request.url) { throw refusal }
        if request.insecure, !node.configuration.allowInsecureTLS {
            throw SluiceError(
                .invalidField, "insecure is allowed only when the service runs with --allow-insecure-tls", field: "insecure"
            )
        }
        try node.client.checkEndpoints(notify: request.notify, proxy: request.proxy)
        for (field, url) in [("checksumUrl", request.checksumURL), ("signatureUrl", request.signatureURL)]
            + request.mirrors.map({ ("mirrors", Optional($0)) })
        {
            if let url, let refusal = node.client.literalRefusal(for: url) {
                throw SluiceError(.forbiddenTarget, "\(field): \(refusal.message)", field: field)
            }
        }
        if request.signatureURL != nil, node.configuration.trustedKeys?.isEmpty ?? true {
            throw SluiceError(
                .invalidField, "signatureUrl: the service has no trusted keys to check signatures with (serve --trusted-keys DIR)",
                field: "signatureUrl")
        }
        // Checked again, and made, when the file is placed: this refuses at once what leads
        // out of the documents now (a symlink).
        if let directory = request.directory,
            let problem = Subdirectory.problem(directory, under: node.configuration.documentsDirectory, creating: false)
        {
            throw SluiceError(.invalidField, "dir: \(problem)", field: "dir")
        }
        try await DependencyStates.checkExist(request.after, on: node)
        let now = node.configuration.clock.now()
        var job = JobSnapshot(
            id: newID(), url: request.url, state: request.paused ? .paused : .queued,
            connections: request.connections, priority: request.priority, createdAt: now,
            requestedFilename: request.filename, headers: request.headers
        )
        job.expectedChecksum = request.checksum
        job.integrity.checksumURL = request.checksumURL
        job.integrity.checksumName = request.checksumName
        job.integrity.signatureURL = request.signatureURL
        job.integrity.mirrors = request.mirrors
        job.updatedAt = now
        job.after = request.after
        job.limitRate = request.limitRate
        job.notify = request.notify
        job.proxy = request.proxy
        job.insecure = request.insecure
        job.directory = request.directory
        job.startAt = request.startAt
        job.ignoreSchedule = request.ignoreSchedule
        job.waitingFor = DependencyStates.notCompleted(request.after, on: node)
        return job
    }

    /// The states of the jobs that new `jobs` wait for, as they are made.
    static func dependencyStates(of jobs: [JobSnapshot], on node: isolated JobScheduler) -> [String: JobState] {
        var states: [String: JobState] = [:]
        for id in jobs.flatMap(\.after) { if let state = DependencyStates.state(of: id, on: node) { states[id] = state } }
        return states
    }

    /// Keeps the states of dependencies that left the table while new jobs were stored.
    static func keepStates(_ states: [String: JobState], on node: isolated JobScheduler) {
        for (id, state) in states where DependencyStates.state(of: id, on: node) == nil { node.finishedDependencies[id] = state }
    }

    /// Makes every job of a batch (`POST /jobs/batch`) with one store write, or none: one that
    /// is refused refuses the batch, naming its place. They are stored queued or paused, and
    /// the queue starts what it can once all are shown.
    static func createAll(_ requests: [CreateJobRequest], on node: isolated JobScheduler) async throws -> [JobSnapshot] {
        do {
            return try await makeAll(requests, on: node)
        } catch {
            // Refused: the states read for the jobs' `after` are not kept for jobs never made.
            DependencyStates.forget(requests.flatMap(\.after), on: node)
            throw error
        }
    }

    private static func makeAll(_ requests: [CreateJobRequest], on node: isolated JobScheduler) async throws -> [JobSnapshot] {
        var made: [JobSnapshot] = []
        made.reserveCapacity(requests.count)
        for (index, request) in requests.enumerated() {
            do { made.append(try await checkedJob(request, on: node)) } catch let error as SluiceError {
                throw CreateJobBatch.placed(error, at: index)
            }
        }
        let dependencyStates = dependencyStates(of: made, on: node)
        for job in made { node.noteControlWrite(job.id) }
        do {
            try await node.repository.insert(made)
        } catch let error as SluiceError where error.code == .storeUnavailable {
            node.book.abandon(made.map(\.id))
            throw error
        }
        keepStates(dependencyStates, on: node)
        node.holdingSchedule {
            for job in made { node.perform(node.machine.created(job).filter { if case .schedule = $0 { false } else { true } }) }
        }
        node.scheduleWakeUp()
        if made.contains(where: { $0.state == .queued }) { await ClusterClaims.claimed(on: node) }
        return made.map { node.jobs[$0.id] ?? $0 }
    }

    private static func newID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let text = String(value, radix: 36)
        return String(repeating: "0", count: max(0, 13 - text.count)) + text
    }
}
