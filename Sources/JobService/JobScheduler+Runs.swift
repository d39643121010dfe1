import DownloadEngine
import Foundation
import SluiceCore
import Logging
import CoreMetrics

extension JobScheduler {
    /// Starts the download of a job that just became `running`, after any previous run of
    /// the same job has finished checkpointing. A job just claimed in a cluster first takes
    /// over the partial file of the node that ran it last.
    func startDownload(_ job: JobSnapshot, claim: ClaimedJob? = nil) {
        // Nothing starts once the service is stopping (an edit that ends after the
        // shutdown began must not start a run nobody waits for).
        guard !isShuttingDown else { return }
        // A cluster node runs only what it holds a lease on.
        let lease = runs[job.id].lease
        if !claiming.mayRun(holdingLease: lease != nil) {
            logger.warning("job \(job.id) is not leased to this node; not started")
            return
        }
        generation += 1
        let current = generation
        let previous = runs.ending(job.id)
        let id = job.id
        let download = engine.makeRun(
            RunRequest(
                job: job, partialPath: partialPath(id), configuration: configuration, rateLimiter: limiter(for: job),
                priorFailures: runs[id].retryFailures ?? 0, neverRun: runs[id].neverRun,
                checkpoints: checkpointStore(id: id, lease: lease), logger: logger
            ))
        runs[id].neverRun = false
        let ownFile = claim.map { $0.lastOwner == nodeName }
        // The run is the service's, not the request's that started it: its store calls take
        // the store's own timeout, not a request's budget.
        let task = Task { () -> Outcome in
            await StoreCallBudget.$current.withValue(nil) { () -> Outcome in
                // A paused run that placed its file before it saw the pause has done the work.
                if case .success(let result)? = await previous?.task.value {
                    await self.finished(id: id, generation: current, .success(result))
                    return .success(result)
                }
                // A claim from the store: the run's own partial file first, once any earlier
                // run of this node has checkpointed.
                if let lease, let ownFile { await self.takeOverPartialFile(id: id, lease: lease, ownFile: ownFile) }
                // One reader of the download's events for the whole run, not a task per tick.
                async let reported: Void = {
                    for await case .progress(let progress) in download.events {
                        await self.progressed(id: id, generation: current, progress)
                    }
                }()
                let outcome: Outcome
                do {
                    outcome = .success(try await download.run())
                } catch {
                    outcome = .failure(error)
                }
                await reported
                await self.finished(id: id, generation: current, outcome)
                return outcome
            }
        }
        machine.started(Run(task: task, generation: current, download: download), id: id)
    }

    func progressed(id: String, generation: Int, _ progress: DownloadProgress) {
        let take = machine.progressed(id: id, generation: generation, now: .now)
        guard take != .ignore, var job = jobs[id], job.state == .running else { return }
        let delta = progress.bytesDone - job.bytesDone
        if delta > 0 { bytesDownloaded.increment(by: delta) }
        job.bytesDone = progress.bytesDone
        job.bytesTotal = progress.bytesTotal
        job.speed = progress.speed
        job.eta = progress.eta
        job.resumable = progress.resumable
        if let name = progress.fileName { job.filename = name }
        if let finding = progress.integrity { job.learnt(finding) }
        if let sources = progress.sources { job.integrity.sources = sources }
        job.updatedAt = configuration.clock.now()
        jobs[id] = job
        storeProgress(job)
        // At most one progress event per job every 250 ms, in real time (`JobMachine`).
        if take == .publish { events.publish(.job(job)) }
        // Last: a quota reached here sends the job back, which must not be overwritten.
        if delta > 0 { QuotaCommand.count(delta, on: self) }
    }

    func finished(id: String, generation: Int, _ outcome: Outcome) async {
        let (ending, first) = machine.runEnded(id: id, generation: generation, outcome: RunEnd.Outcome(outcome), job: jobs[id])
        perform(first)
        let recorded: Bool
        switch ending {
        case .superseded: return
        case .nothing: recorded = true
        case .record: recorded = await completeBounded(id: id, outcome)
        }
        // A finished job the store took leaves the table now that no pause waits on its run.
        let after = machine.recorded(id: id, generation: generation)
        if recorded { perform(after) }
    }

    /// Records a run's end with the store calls of a command's budget: this actor waits on
    /// those made in its turn (a webhook's record, a read back), and a stalled store must not
    /// hold it longer than a command may wait. An end the store does not take in time is
    /// recorded by the heartbeat (`unrecordedRuns`).
    private func completeBounded(id: String, _ outcome: Outcome) async -> Bool {
        await StoreCallBudget.bounded(configuration.storeBudget) {
            await complete(id: id, outcome)
        }
    }

    /// Records how a run ended (`JobMachine.endOfRun` decides) and starts what can start
    /// next. Returns false when the store could not take a cluster run's end (the heartbeat
    /// records it later).
    private func complete(id: String, _ outcome: Outcome) async -> Bool {
        guard let job = jobs[id] else {
            runs[id].lastProgressEvent = nil
            return true
        }
        let ended = RunEnd.Outcome(outcome)
        if let (level, line) = RunEndLog.line(for: job, ended, outcome) { logger.log(level: level, "\(line)") }
        let (endedJob, actions, storeFirst) = machine.endOfRun(
            job, outcome: ended, result: try? outcome.get(), now: configuration.clock.now(),
            documentsDirectory: configuration.documentsDirectory
        )
        if endedJob.state == .completed, job.state != .completed, endedJob.bytesDone > job.bytesDone {
            bytesDownloaded.increment(by: endedJob.bytesDone - job.bytesDone)
        }
        // What the run fetched after its last progress report (a stop's tail) counts too.
        if endedJob.bytesDone > job.bytesDone { QuotaCommand.count(endedJob.bytesDone - job.bytesDone, on: self) }
        // Recorded behind at once, unless the machine says to write it under a lease first.
        guard case .finishRun(let finishing, let lease, let tell)? = storeFirst else {
            perform(actions)
            return true
        }
        // What must hold before the end is seen (a wait for disk space): the store's answer
        // shows the job, and a claim after it must not take it back.
        perform(actions)
        return await ClusterWrites.finishRun(finishing, lease: lease, tell: tell, on: self)
    }
}
