import DownloadEngine
import Foundation
import Logging
import SluiceCore
import SluiceSystem

/// A user's commands on one job, on the runner's actor: pause, resume and delete, each
/// answered once what it changed is stored (or, for a pause, once the run has stopped).
enum JobCommands {
    /// Pauses the job and answers once its run has stopped and its checkpoint is stored: the
    /// `bytesDone` it returns is final, and an edit right after it sees those bytes.
    static func pause(id: String, on node: isolated JobScheduler) async throws -> JobSnapshot {
        try await node.holdStored(id)
        defer { node.releaseHold(id) }
        // The state and the bytes the stopped run leaves are one write (with the run's last
        // checkpoint, two in all), and nothing is read.
        node.writes.hold([id])
        defer { node.writes.release([id]) }
        _ = try await node.apply(id) { $0.pauseRequested() }
        await settle([id], on: node)
        node.writes.release([id])
        await stored([id], on: node)
        // A run that placed its file meanwhile may have let its job go: the store has it.
        guard let job = try await node.jobInPlace(id: id) else { throw SluiceError(.notFound, "no job \(id)") }
        return job
    }

    /// Waits, within the command's budget, until the changes of `ids` are stored: an answer
    /// after it survives a `kill -9`. While the store does not answer, the command answers
    /// from memory when its budget is spent, and the changes are stored once the store
    /// answers again (`JobWrites`).
    static func stored(_ ids: [String], on node: isolated JobScheduler) async {
        for id in ids {
            do { try await node.writes.stored(id) } catch { return }
        }
    }

    /// Waits (up to `Configuration.settleLimit`) for the stopped runs of `ids` to end, their checkpoints
    /// saved, then takes the bytes each checkpoint covers as the job's own: what a run had
    /// in flight when it was stopped is counted, and nothing more will be.
    static func settle(_ ids: [String], on node: isolated JobScheduler) async {
        let pending = ids.compactMap { id in node.runs.ending(id).map { (id, $0) } }
        guard !pending.isEmpty else { return }
        await waitForRuns(pending.map(\.1.task), upTo: node.configuration.settleLimit)
        for (_, run) in pending where RunSettle.wait(ending: true, committed: run.download.isCommitted) == .untilEnded {
            _ = await run.task.value
        }
        // The wait was the run's, not the store's.
        StoreCallBudget.renew()
        for (id, run) in pending {
            guard
                RunSettle.takesCheckpoint(
                    run: run.generation, slot: node.runs.slot(id)?.run.generation, ending: node.runs.ending(id)?.generation,
                    state: node.jobs[id]?.state
                )
            else { continue }
            // The run hands back the bytes of its last stored checkpoint: nothing is read.
            guard var job = node.jobs[id], let bytes = RunSettle.bytes(checkpoint: run.download.checkpointedBytes, shown: job.bytesDone)
            else { continue }
            job.bytesDone = bytes
            node.update(job)
        }
    }

    /// Waits until `tasks` have ended or `limit` has passed, whichever comes first. (A task
    /// group would wait for its waiting child at the end anyway: a wait on a task's value
    /// does not end when cancelled.)
    static func waitForRuns(_ tasks: [Task<JobScheduler.Outcome, Never>], upTo limit: Duration) async {
        let (ended, signal) = AsyncStream.makeStream(of: Void.self)
        let waiter = Task {
            for task in tasks { _ = await task.value }
            signal.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            signal.finish()
        }
        for await _ in ended {}
        timer.cancel()
        _ = waiter
    }

    static func resume(id: String, on node: isolated JobScheduler) async throws -> JobSnapshot {
        try await resumeHeld(id: id, on: node)
        await stored([id], on: node)
        return try await answer(id, on: node)
    }

    /// The job as a command answers it: from the table, or from the store when it has
    /// finished and left the table meanwhile (a resumed job whose run failed at once; the
    /// answer was 404 "no job").
    static func answer(_ id: String, on node: isolated JobScheduler) async throws -> JobSnapshot {
        guard let job = try await node.jobInPlace(id: id) else { throw SluiceError(.notFound, "no job \(id)") }
        return job
    }

    /// `resume` without the wait for its changes to be stored (a bulk resume waits once).
    static func resumeHeld(id: String, on node: isolated JobScheduler) async throws {
        try await node.holdStored(id)
        defer { node.releaseHold(id) }
        // The bytes on disk hash wrong: checking them again would fail again. Start over,
        // before the resume can start the download.
        if let failed = node.jobs[id], failed.state == .failed, failed.error?.code == SluiceError.Code.checksumMismatch.rawValue {
            try await node.checkNotRunningElsewhere(id)
            try await node.repository.saveCheckpoint(nil, id: id)
            node.removePartialFiles(id)
            node.jobs[id]?.bytesDone = 0
        }
        // A job waiting out a remote's Retry-After: a resume means "try now".
        if var waiting = node.jobs[id], waiting.state == .queued, waiting.retryAt != nil {
            waiting.retryAt = nil
            node.runs[id].retryFailures = nil
            node.update(waiting)
        }
        // Dependencies deleted meanwhile have nothing left to wait for; failed ones are
        // waited for again (they can be retried).
        if var waiting = node.jobs[id], waiting.after.contains(where: { DependencyStates.state(of: $0, on: node) == nil }) {
            waiting.after.removeAll { DependencyStates.state(of: $0, on: node) == nil }
            node.update(waiting)
        }
        var job = try await node.apply(id) { $0.resumeRequested() }
        // `apply` may already have started it: clear the old error in either state.
        if job.state != .failed, job.error != nil {
            job.error = nil
            node.update(job)
        }
        node.schedule()
        await ClusterClaims.claimed(on: node)
    }

    /// Stops the job, removes its partial file and record, and the finished file too when
    /// `deleteFile` says so.
    ///
    /// The record goes first, with its `removed` deliveries in the same transaction: a store
    /// that cannot write changes nothing (503), and a crash never brings back a job whose
    /// removal was told.
    static func delete(id: String, deleteFile: Bool, on node: isolated JobScheduler) async throws {
        try await node.holdStored(id)
        defer { node.releaseHold(id) }
        // Its changes still to be written go first (a `completed` delivery before `removed`).
        try await node.writes.stored(id)
        guard let snapshot = node.jobs[id] else { throw SluiceError(.notFound, "no job \(id)") }
        let removed = node.webhooks?.deliveries(for: .removed, job: snapshot) ?? []
        try await node.repository.delete(id: id, deliveries: removed)
        // Read again after the store's answer. A cluster node's change feed may have taken the
        // removal meanwhile (its table, runtime and event are gone then); the files are this
        // command's to remove all the same.
        let shown = node.jobs[id] != nil
        let job = node.jobs[id] ?? snapshot
        // A change of it still to be written would find no row, or a row made again.
        node.writes.forget(id)
        node.noteControlWrite(id)
        node.webhooks?.stored(removed)
        // Who waited for it, read before it goes.
        let dependents = DependencyStates.waiting(for: id, on: node).compactMap { node.jobs[$0] }
        node.jobs[id] = nil
        node.book.removed(id, state: job.state)
        // A deleted job is no dependency any more (a new `after` naming it is refused), and
        // the finished ones it waited for may be waited for by nobody now.
        node.finishedDependencies[id] = nil
        DependencyStates.forget(job.after, on: node)
        if shown { node.events.publish(.removed(id: id)) }
        // Its run (stopped, to wait for), lease, limiter and the rest go together; its
        // dependents forget it or fail.
        let (pending, actions) = node.machine.deleted(job, dependents: dependents)
        node.perform(actions)
        // A run that placed its file before the stop reached it (or is recording its end):
        // the file is finished, and goes with the job only when the request says so.
        if case .success(let result) = await pending?.task.value, deleteFile {
            unlink(result.path)
        }
        // The wait was the run's, not the store's (a bulk delete goes on to the next job).
        StoreCallBudget.renew()
        node.removePartialFiles(id)
        if deleteFile { removeFinishedFile(of: job, on: node) }
    }

    /// A deleted job's finished file, by its stored name as it is (never percent-encoded,
    /// so `%` is a plain character); nothing for a name that could leave the directory.
    static func removeFinishedFile(of job: JobSnapshot, on node: isolated JobScheduler) {
        guard let path = job.path,
            path.pathParts.allSatisfy({ SafeRelativePath.isPlainName($0) })
        else { return }
        unlink(node.configuration.documentsDirectory + "/" + path)
    }
}
