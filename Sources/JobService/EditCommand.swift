import DownloadEngine
import Foundation
import Logging
import SluiceCore

/// `PATCH /jobs/ID`: a job's URL, headers, priority, connections, rate, dependencies or
/// name, changed while it waits or runs. `JobEdit` decides each step; this runs them on the
/// runner's actor.
enum EditCommand {
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
    static func edit(id: String, _ patch: JobPatch, on node: isolated JobScheduler) async throws -> JobSnapshot {
        // One rule set for every route that edits a job (`PATCH /jobs/ID`, aria2's
        // `changeOption` and `changeUri`): a patch built field by field is checked as a
        // decoded one is, before anything is held or changed.
        try patch.validate()
        try await node.holdStored(id)
        defer { node.releaseHold(id) }
        guard !node.runs[id].editing else {
            throw SluiceError(.invalidTransition, "job \(id) is being edited; try again when that edit is done")
        }
        node.runs[id].editing = true
        let outcome: Result<Void, any Error>
        do {
            try await applyEdit(id: id, patch, on: node)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // A run the edit stopped goes on (under the new values, or as it was when the edit
        // was refused), unless it must now wait for other jobs.
        let complete = node.jobs[id].map { DependencyStates.complete($0, on: node) } ?? false
        node.perform(node.machine.editEnded(node.jobs[id], id: id, dependenciesComplete: complete))
        try outcome.get()
        await JobCommands.stored([id], on: node)
        return try await JobCommands.answer(id, on: node)
    }

    private static func applyEdit(id: String, _ patch: JobPatch, on node: isolated JobScheduler) async throws {
        var job = try editable(id, on: node)
        try await checkDependencies(patch.after, of: id, on: node)
        let newURL = patch.url.flatMap { $0 == job.url ? nil : $0 }
        var edit = JobEdit(changesTheDownload: patch.changesTheDownload, changesTheURL: newURL != nil, keepBytes: patch.keepBytes)
        var checkpoint: DownloadCheckpoint?
        steps: while true {
            switch edit.next(editSight(id, on: node)) {
            case .refuse(let refusal):
                throw Self.error(refusal, id: id, node: node.jobs[id]?.node)
            case .checkRequest:
                if let newURL, let refusal = node.client.literalRefusal(for: newURL) { throw refusal }
                try node.client.checkEndpoints(notify: patch.notify?.value, proxy: patch.proxy?.value)
            case .recheck(let claim):
                job = try editable(id, on: node)
                try await checkDependencies(patch.after, of: id, on: node)
                if claim { try await node.checkNotRunningElsewhere(id) }
            case .stopRun:
                node.stop(id)
            case .waitForRun:
                if let pending = node.runs.ending(id) { _ = await pending.task.value }
                // The wait was the run's, not the store's.
                StoreCallBudget.renew()
            case .readBytes:
                checkpoint = try await node.repository.checkpoint(id: id)
                guard edit.bytesRead(any: checkpoint.map { !$0.written.isEmpty } ?? false), let newURL, let read = checkpoint else {
                    continue
                }
                // By the job's own route: its proxy, its TLS choice, the per-host cap.
                let proxy = patch.proxy.map(\.value) ?? job.proxy
                let probe = try await probe(
                    newURL, headers: patch.headers ?? job.headers, proxy: proxy, insecure: job.insecure, against: read, on: node)
                // The probe was the remote's wait, not the store's.
                StoreCallBudget.renew()
                if case .refuse(let refusal)? = edit.probed(probe) { throw Self.error(refusal, id: id, node: node.jobs[id]?.node) }
            case .apply:
                break steps
            }
        }
        _ = try editable(id, on: node)
        switch edit.bytes {
        case .unchanged:
            break
        case .moved(let finalURL):
            if var moved = checkpoint, let newURL {
                moved.url = newURL
                moved.finalURL = finalURL
                try await node.repository.saveCheckpoint(moved, id: id)
            }
        case .dropped:
            try await node.repository.saveCheckpoint(nil, id: id)
            node.removePartialFiles(id)
        }
        // Read after the store's answers: a pause, resume or delete may have come meanwhile,
        // and the edit applies to the job as it is now (a deleted one is not brought back).
        job = try editable(id, on: node)
        if case .dropped = edit.bytes {
            job.bytesDone = 0
            job.bytesTotal = nil
            job.resumable = false
        }
        if let url = patch.url { job.url = url }
        if let headers = patch.headers { job.headers = headers }
        if let priority = patch.priority { job.priority = priority }
        if let connections = patch.connections { job.connections = connections }
        if let limitRate = patch.limitRate {
            job.limitRate = limitRate.value
            node.runs[id].limiter?.setRate(job.limitRate)
        }
        if let after = patch.after { job.after = after }
        if let notify = patch.notify { job.notify = notify.value }
        if let proxy = patch.proxy { job.proxy = proxy.value }
        if let startAt = patch.startAt { job.startAt = startAt.value }
        if let ignoreSchedule = patch.ignoreSchedule { job.ignoreSchedule = ignoreSchedule }
        if let filename = patch.filename {
            job.requestedFilename = filename.value
            if let name = filename.value { job.filename = name }
        }
        node.update(job)
        if job.state == .running, node.runs.running(id) != nil, !DependencyStates.complete(job, on: node) {
            node.sendBack(id, reason: "it now waits for other jobs")
        }
        // A `startAt` moved later: a running job waits for it, its bytes kept; a new instant
        // wakes the queue then.
        if let startAt = job.startAt, startAt > node.configuration.clock.now(), job.state == .running, node.runs.running(id) != nil {
            node.sendBack(id, reason: "it now starts at \(startAt)")
        }
        if patch.startAt != nil || patch.ignoreSchedule != nil {
            node.scheduleWakeUp()
            node.schedule()
        }
    }

    /// What an edit sees of a job on this node.
    static func editSight(_ id: String, on node: isolated JobScheduler) -> JobEdit.Sight {
        node.machine.editSight(id, state: node.jobs[id]?.state)
    }

    /// An edit's refusal as the API answers it.
    static func error(_ refusal: JobEdit.Refusal, id: String, node: String?) -> SluiceError {
        switch refusal {
        case .gone:
            SluiceError(.notFound, "no job \(id)")
        case .completed:
            SluiceError(.invalidTransition, "a completed job cannot be edited")
        case .runningElsewhere:
            SluiceError(
                .invalidTransition,
                "job \(id) is running on node \(node ?? "another node"): pause it first to change its URL, headers, connections or name"
            )
        case .newURLUnprobed:
            SluiceError(.remoteChanged, "the new URL could not be probed, so it cannot be known to serve the same file")
        case .newURLServesAnotherFile:
            SluiceError(
                .remoteChanged,
                "the new URL does not serve the same file (its length or validator differs), so the bytes on disk cannot be kept"
            )
        }
    }

    /// The job, if it may be edited: it exists and is not completed.
    private static func editable(_ id: String, on node: isolated JobScheduler) throws -> JobSnapshot {
        guard let job = node.jobs[id] else { throw SluiceError(.notFound, "no job \(id)") }
        guard job.state != .completed else { throw SluiceError(.invalidTransition, "a completed job cannot be edited") }
        return job
    }

    /// New dependencies must name other jobs that exist and must not close a cycle.
    private static func checkDependencies(_ after: [String]?, of id: String, on node: isolated JobScheduler) async throws {
        guard let after else { return }
        if after.contains(id) { throw SluiceError(.invalidField, "a job cannot wait for itself", field: "after") }
        try await DependencyStates.checkExist(after, on: node)
        if JobDependencies.makesCycle(id: id, after: after, dependencies: { node.jobs[$0]?.after ?? [] }) {
            throw SluiceError(.dependencyCycle, "after would make a cycle: one of these jobs already waits for \(id)")
        }
    }

    /// Probes `url` and compares what it serves with what the checkpoint's bytes came from.
    /// A name that resolves to an address the policy refuses is the edit's refusal.
    private static func probe(
        _ url: String, headers: [String: String], proxy: String?, insecure: Bool, against checkpoint: DownloadCheckpoint,
        on node: isolated JobScheduler
    ) async throws -> JobEdit.Probe {
        var options = DownloadOptions(connections: 1, headers: headers, stallTimeout: 10)
        options.clock = node.configuration.clock
        // The probe leaves by the job's own route, as its runs do: through its proxy, under
        // the per-host connection cap, verifying certificates unless the job and the service
        // both say not to.
        options.proxy = proxy.flatMap { try? EndpointURL.proxy($0, field: "proxy") }
        options.hostConnections = node.configuration.hostConnections
        options.insecure = insecure && node.configuration.allowInsecureTLS
        do {
            let identity = try await Download.identify(url: url, options: options, client: node.client)
            return identity.serves(theFileOf: checkpoint) ? .sameFile(finalURL: identity.finalURL) : .otherFile
        } catch let error as SluiceError where error.code == .forbiddenTarget {
            throw error
        } catch {
            node.logger.info("the new URL could not be probed: \(error)")
            return .unknown
        }
    }
}
