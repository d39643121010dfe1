import DownloadEngine
import Foundation
public import SluiceCore
import SluiceSystem

/// Creating jobs: one (`POST /jobs`, with or without an idempotency key) or a batch.
extension JobScheduler {
    /// Creates a job. With an idempotency key that made a job in the last day from the same
    /// request, that job is returned instead (`replayed`), and nothing is created; the same
    /// key with another request is refused (422 `idempotency_key_reused`), as the IETF's
    /// Idempotency-Key draft and Stripe do.
    public func create(_ request: CreateJobRequest, idempotencyKey: String? = nil) async throws -> (job: JobSnapshot, replayed: Bool) {
        guard let idempotencyKey else { return (try await createNew(request, idempotencyKey: nil), false) }
        try IdempotencyKey.validate(idempotencyKey)
        let fingerprint = request.fingerprint
        // A create with the same key under way (a client's retry): its job, once made.
        if let underWay = creatingWithKey[idempotencyKey] {
            return (try await Self.replay(underWay, key: idempotencyKey, fingerprint: fingerprint), true)
        }
        let since = configuration.clock.now().addingTimeInterval(-IdempotencyKey.lifetime)
        // The job it made may have finished and left the table: the store has it then. A key
        // stored before requests were fingerprinted is taken as the same request.
        if let made = try await repository.idempotentCreate(key: idempotencyKey, since: since) {
            if let request = made.request, request != fingerprint { throw Self.reused(idempotencyKey, job: made.jobID) }
            if let job = jobs[made.jobID] { return (job, true) }
            if let job = try await storedFinishedJob(made.jobID) { return (job, true) }
        }
        if let underWay = creatingWithKey[idempotencyKey] {
            return (try await Self.replay(underWay, key: idempotencyKey, fingerprint: fingerprint), true)
        }
        let creating = Task { try await self.createNew(request, idempotencyKey: idempotencyKey, fingerprint: fingerprint) }
        creatingWithKey[idempotencyKey] = (creating, fingerprint)
        defer { creatingWithKey[idempotencyKey] = nil }
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
    func createNew(_ request: CreateJobRequest, idempotencyKey: String?, fingerprint: String? = nil) async throws -> JobSnapshot {
        do {
            return try await makeNew(request, idempotencyKey: idempotencyKey, fingerprint: fingerprint)
        } catch {
            // Refused: the states read for its `after` are not kept for a job never made.
            forgetFinishedDependencies(request.after)
            throw error
        }
    }

    private func makeNew(_ request: CreateJobRequest, idempotencyKey: String?, fingerprint: String?) async throws -> JobSnapshot {
        var job = try await checkedJob(request)
        // Their states as the job is made: a finished one may leave the table while the store
        // inserts the job (nothing waits for it yet), and must not look deleted then.
        let dependencyStates = dependencyStates(of: [job])
        // A job that starts at once is stored running: one write, not a queued one and then
        // a running one. Its slot is kept for it while the store inserts it.
        if startsAtOnce(job) {
            var lifecycle = JobLifecycle(state: job.state)
            if lifecycle.slotGranted() == .startDownload { job.state = lifecycle.state }
        }
        let keepsSlot = job.state == .running
        if keepsSlot { startingInCreation += 1 }
        defer { if keepsSlot { startingInCreation -= 1 } }
        noteControlWrite(job.id)
        do {
            try await repository.insert(job, idempotencyKey: idempotencyKey, request: fingerprint)
        } catch let error as SluiceError where error.code == .storeUnavailable {
            // The answer is 503, so the job must never appear, though its row may still land
            // (a cluster's `COMMIT` may outlive the request's budget).
            book.abandon([job.id])
            throw error
        }
        // Stopping began while the store inserted it: it stays queued, for the next start.
        if keepsSlot, isShuttingDown { job.state = .queued }
        keepStates(dependencyStates)
        perform(machine.created(job))
        // A cluster node answers once its claim has taken the job, or not.
        if job.state == .queued { await claimed() }
        return jobs[job.id] ?? job
    }

    /// A request checked and made a job, not stored yet: what a create and a batch share. A
    /// literal address is refused before anything is stored; a name is checked on every
    /// connection, when it is resolved.
    func checkedJob(_ request: CreateJobRequest) async throws -> JobSnapshot {
        if let refusal = client.literalRefusal(for: request.url) { throw refusal }
        if request.insecure, !configuration.allowInsecureTLS {
            throw SluiceError(
                .invalidField, "insecure is allowed only when the service runs with --allow-insecure-tls", field: "insecure"
            )
        }
        try checkEndpoints(notify: request.notify, proxy: request.proxy)
        // Checked again, and made, when the file is placed: this refuses at once what leads
        // out of the documents now (a symlink).
        if let directory = request.directory,
            let problem = Subdirectory.problem(directory, under: configuration.documentsDirectory, creating: false)
        {
            throw SluiceError(.invalidField, "dir: \(problem)", field: "dir")
        }
        try await checkDependenciesExist(request.after)
        let now = configuration.clock.now()
        var job = JobSnapshot(
            id: Self.newID(), url: request.url, state: request.paused ? .paused : .queued,
            connections: request.connections, priority: request.priority, createdAt: now,
            requestedFilename: request.filename, expectedSHA256: request.sha256, headers: request.headers
        )
        job.updatedAt = now
        job.after = request.after
        job.limitRate = request.limitRate
        job.notify = request.notify
        job.proxy = request.proxy
        job.insecure = request.insecure
        job.directory = request.directory
        job.waitingFor = notCompleted(request.after)
        return job
    }

    /// The states of the jobs that new `jobs` wait for, as they are made.
    func dependencyStates(of jobs: [JobSnapshot]) -> [String: JobState] {
        var states: [String: JobState] = [:]
        for id in jobs.flatMap(\.after) { if let state = stateOf(id) { states[id] = state } }
        return states
    }

    /// Keeps the states of dependencies that left the table while new jobs were stored.
    func keepStates(_ states: [String: JobState]) {
        for (id, state) in states where stateOf(id) == nil { finishedDependencies[id] = state }
    }

    /// Makes every job of a batch (`POST /jobs/batch`) with one store write, or none: one that
    /// is refused refuses the batch, naming its place. They are stored queued or paused, and
    /// the queue starts what it can once all are shown.
    public func createAll(_ requests: [CreateJobRequest]) async throws -> [JobSnapshot] {
        do {
            return try await makeAll(requests)
        } catch {
            // Refused: the states read for the jobs' `after` are not kept for jobs never made.
            forgetFinishedDependencies(requests.flatMap(\.after))
            throw error
        }
    }

    private func makeAll(_ requests: [CreateJobRequest]) async throws -> [JobSnapshot] {
        var made: [JobSnapshot] = []
        made.reserveCapacity(requests.count)
        for (index, request) in requests.enumerated() {
            do { made.append(try await checkedJob(request)) } catch let error as SluiceError {
                throw CreateJobBatch.placed(error, at: index)
            }
        }
        let dependencyStates = dependencyStates(of: made)
        for job in made { noteControlWrite(job.id) }
        do {
            try await repository.insert(made)
        } catch let error as SluiceError where error.code == .storeUnavailable {
            book.abandon(made.map(\.id))
            throw error
        }
        keepStates(dependencyStates)
        holdingSchedule {
            for job in made { perform(machine.created(job).filter { if case .schedule = $0 { false } else { true } }) }
        }
        scheduleWakeUp()
        if made.contains(where: { $0.state == .queued }) { await claimed() }
        return made.map { jobs[$0.id] ?? $0 }
    }

    private static func newID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let text = String(value, radix: 36)
        return String(repeating: "0", count: max(0, 13 - text.count)) + text
    }
}
