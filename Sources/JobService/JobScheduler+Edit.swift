import DownloadEngine
import Foundation
import Logging
public import SluiceCore

/// `PATCH /jobs/ID`: a job's URL, headers, priority, connections, rate, dependencies or
/// name, changed while it waits or runs.
extension JobScheduler {
    /// Applies `patch` to the job at once. A running job stops after a checkpoint and goes
    /// on under the new values when what its download was started with changed (URL,
    /// headers, connections, name); a new priority or rate needs no stop. A new URL for a
    /// job with bytes on disk is probed first: the bytes are kept when it serves the same
    /// file (same length, same strong validator), dropped when it serves another, or with
    /// `keepBytes` the edit is refused (409 `remote_changed`) and nothing changes.
    ///
    /// An edit may wait (for the run to checkpoint, for the probe): meanwhile the job is
    /// marked as being edited, the queue neither starts it nor gives its slot away, and a
    /// second edit of it is refused (409). Pauses, resumes and deletes still apply; the job
    /// is read again after every wait.
    public func edit(id: String, _ patch: JobPatch) async throws -> JobSnapshot {
        try holdStored(id)
        defer { letGoIfFinished(id) }
        guard !runs[id].editing else {
            throw SluiceError(.invalidTransition, "job \(id) is being edited; try again when that edit is done")
        }
        runs[id].editing = true
        let outcome: Result<Void, any Error>
        do {
            try await applyEdit(id: id, patch)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        runs[id].editing = false
        // A run the edit stopped goes on (under the new values, or as it was when the edit
        // was refused), unless it must now wait for other jobs.
        if var job = jobs[id], job.state == .running, runs.running(id) == nil, cluster == nil || runs[id].lease != nil {
            if dependenciesComplete(job) {
                startDownload(job)
            } else {
                job.state = .queued
                update(job)
            }
        }
        schedule()
        try outcome.get()
        guard let job = jobs[id] else { throw SluiceError(.notFound, "no job \(id)") }
        return job
    }

    private func applyEdit(id: String, _ patch: JobPatch) async throws {
        var job = try editable(id)
        try checkDependencies(patch.after, of: id)
        if cluster != nil, job.state == .running, runs[id].lease == nil, patch.changesTheDownload {
            throw SluiceError(
                .invalidTransition,
                "job \(id) is running on node \(job.node ?? "another node"): pause it first to change its URL, headers, connections or name"
            )
        }
        if let url = patch.url, url != job.url, let refusal = client.literalRefusal(for: url) { throw refusal }
        try checkEndpoints(notify: patch.notify?.value, proxy: patch.proxy?.value)
        // A run whose URL, headers, connections or name change ends first, after its
        // checkpoint, so that the checkpoint judged and kept below is the newest.
        if runs.running(id) != nil, patch.changesTheDownload {
            stop(id)
        }
        // A run stopped by this edit or just before it (a pause whose answer is still on
        // its way) ends first, after its checkpoint: the checkpoint judged and kept below is
        // the newest, never an older one the run is about to overwrite.
        if patch.changesTheDownload, let pending = runs.ending(id) {
            _ = await pending.task.value
            StoreCallBudget.renew()
            job = try editable(id)
            try checkDependencies(patch.after, of: id)
        }
        if let url = patch.url, url != job.url, let checkpoint = try repository.checkpoint(id: id), !checkpoint.written.isEmpty {
            let bytes = try await retarget(checkpoint, to: url, headers: patch.headers ?? job.headers, keepBytes: patch.keepBytes)
            // The probe was the remote's wait, not the store's.
            StoreCallBudget.renew()
            job = try editable(id)
            try checkDependencies(patch.after, of: id)
            try checkNotRunningElsewhere(id)
            switch bytes {
            case .kept(let moved):
                try repository.saveCheckpoint(moved, id: id)
            case .dropped:
                try repository.saveCheckpoint(nil, id: id)
                removePartialFiles(id)
                job.bytesDone = 0
                job.bytesTotal = nil
                job.resumable = false
            }
        }
        if let url = patch.url { job.url = url }
        if let headers = patch.headers { job.headers = headers }
        if let priority = patch.priority { job.priority = priority }
        if let connections = patch.connections { job.connections = connections }
        if let limitRate = patch.limitRate {
            job.limitRate = limitRate.value
            runs[id].limiter?.setRate(job.limitRate)
        }
        if let after = patch.after { job.after = after }
        if let notify = patch.notify { job.notify = notify.value }
        if let proxy = patch.proxy { job.proxy = proxy.value }
        if let filename = patch.filename {
            job.requestedFilename = filename.value
            if let name = filename.value { job.filename = name }
        }
        update(job)
        if job.state == .running, runs.running(id) != nil, !dependenciesComplete(job) {
            sendBack(id, reason: "it now waits for other jobs")
        }
    }

    /// In a cluster, the bytes of a job another node has claimed meanwhile are that node's:
    /// read from the store just before they are changed.
    func checkNotRunningElsewhere(_ id: String) throws {
        guard let cluster, runs[id].lease == nil, let stored = try cluster.job(id: id), stored.state == .running else { return }
        absorb(stored)
        throw SluiceError(.invalidTransition, "job \(id) started on node \(stored.node ?? "another node") meanwhile: pause it first")
    }

    /// What a new URL does to the bytes on disk.
    enum BytesOnDisk {
        /// The new URL serves the same file: the checkpoint, now for the new URL.
        case kept(DownloadCheckpoint)
        /// It does not: the job starts over.
        case dropped
    }

    /// The job, if it may be edited: it exists and is not completed.
    private func editable(_ id: String) throws -> JobSnapshot {
        guard let job = jobs[id] else { throw SluiceError(.notFound, "no job \(id)") }
        guard job.state != .completed else { throw SluiceError(.invalidTransition, "a completed job cannot be edited") }
        return job
    }

    /// New dependencies must name other jobs that exist and must not close a cycle.
    private func checkDependencies(_ after: [String]?, of id: String) throws {
        guard let after else { return }
        if after.contains(id) { throw SluiceError(.invalidField, "a job cannot wait for itself", field: "after") }
        if let unknown = try JobDependencies.unknown(in: after, exists: { try dependencyExists($0) }) {
            throw SluiceError(.invalidField, "after names no job \(unknown)", field: "after")
        }
        if JobDependencies.makesCycle(id: id, after: after, dependencies: { self.jobs[$0]?.after ?? [] }) {
            throw SluiceError(.dependencyCycle, "after would make a cycle: one of these jobs already waits for \(id)")
        }
    }

    /// Probes `url` and compares what it serves with what the checkpoint's bytes came from.
    private func retarget(_ checkpoint: DownloadCheckpoint, to url: String, headers: [String: String], keepBytes: Bool)
        async throws -> BytesOnDisk
    {
        var options = DownloadOptions(connections: 1, headers: headers, stallTimeout: 10)
        options.clock = configuration.clock
        let identity: RemoteIdentity?
        do {
            identity = try await Download.identify(url: url, options: options, client: client)
        } catch let error as SluiceError where error.code == .forbiddenTarget {
            throw error
        } catch {
            logger.info("the new URL could not be probed: \(error)")
            identity = nil
        }
        guard let identity else {
            // Unknown (a timeout, a 5xx): the bytes stay, moved to the new URL, and the
            // download's own If-Range decides on resume; a different file starts over then,
            // never mixed. With keepBytes the answer must be sure now, so it is a refusal.
            if keepBytes {
                throw SluiceError(.remoteChanged, "the new URL could not be probed, so it cannot be known to serve the same file")
            }
            var moved = checkpoint
            moved.url = url
            moved.finalURL = nil
            return .kept(moved)
        }
        if identity.serves(theFileOf: checkpoint) {
            var moved = checkpoint
            moved.url = url
            moved.finalURL = identity.finalURL
            return .kept(moved)
        }
        if keepBytes {
            throw SluiceError(
                .remoteChanged,
                "the new URL does not serve the same file (its length or validator differs), so the bytes on disk cannot be kept"
            )
        }
        return .dropped
    }
}
