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
        let download = Download(
            url: job.url,
            target: DownloadTarget(
                partialPath: partialPath(id), destination: .directory(configuration.documentsDirectory),
                fileName: job.requestedFilename
            ),
            options: {
                var options = DownloadOptions(
                    connections: job.connections, headers: job.headers, expectedSHA256: job.expectedSHA256,
                    retry: configuration.retry, stallTimeout: configuration.stallTimeout, rateLimiter: limiter(for: job)
                )
                options.minimumFreeSpace = configuration.minFreeSpace
                options.releaseSlotAfter = configuration.releaseSlotAfter
                options.priorFailures = runs[id].retryFailures ?? 0
                options.clock = configuration.clock
                options.proxy = job.proxy.flatMap { try? EndpointURL.proxy($0, field: "proxy") }
                options.hostConnections = configuration.hostConnections
                // Only where this node allows it (a restart without the flag, another node).
                options.insecure = job.insecure && configuration.allowInsecureTLS
                options.neverRun = runs[id].neverRun
                return options
            }(),
            client: client, checkpoints: checkpointStore(id: id, lease: lease),
            logger: logger
        )
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
                if let lease, let ownFile { await self.adoptPartialFile(id: id, lease: lease, ownFile: ownFile) }
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
        runs.start(Run(task: task, generation: current, download: download), id: id)
    }

    /// Where a run saves its checkpoints: fenced by its lease in a cluster.
    func checkpointStore(id: String, lease: Lease?) -> any CheckpointStore {
        guard let cluster, let lease else { return JobCheckpointStore(repository: repository, id: id, writer: checkpointWriter) }
        return FencedCheckpointStore(store: cluster, writer: checkpointWriter, lease: lease) { [weak self] in
            await self?.leaseLost(id: id, epoch: lease.epoch)
        }
    }

    func progressed(id: String, generation: Int, _ progress: DownloadProgress) {
        guard runs.running(id)?.generation == generation, var job = jobs[id], job.state == .running else { return }
        let delta = progress.bytesDone - job.bytesDone
        if delta > 0 { bytesDownloaded.increment(by: delta) }
        job.bytesDone = progress.bytesDone
        job.bytesTotal = progress.bytesTotal
        job.speed = progress.speed
        job.eta = progress.eta
        job.resumable = progress.resumable
        if let name = progress.fileName { job.filename = name }
        job.updatedAt = configuration.clock.now()
        jobs[id] = job
        storeProgress(job)
        // At most one progress event per job every 250 ms (CONTRACT §3), whatever the engine's
        // pace: a bound on what subscribers are sent, in real time.
        let now = ContinuousClock.now
        if let last = runs[id].lastProgressEvent, now - last < .milliseconds(240) { return }
        runs[id].lastProgressEvent = now
        events.publish(.job(job))
    }

    func finished(id: String, generation: Int, _ outcome: Outcome) async {
        let recorded: Bool
        switch runs.ended(id, generation: generation) {
        case .own:
            // Until its end is recorded the run stays in its slot (`recording`): a pause that
            // comes while a cluster's store records it waits for that record, and answers it.
            recorded = await completeBounded(id: id, outcome)
        case .stopped:
            // A stopped run that finished anyway (the pause or the shutdown came after the
            // file was placed): honour it.
            if case .success = outcome, let job = jobs[id], job.state.isLive {
                recorded = await completeBounded(id: id, outcome)
            } else {
                releaseLease(id)
                recorded = true
            }
        case .superseded:
            // A newer run picks the result up itself, and holds the lease; a deleted job's
            // lease (if any is left) goes.
            if runs.slot(id) == nil { releaseLease(id) }
            return
        }
        runs.recorded(id, generation: generation)
        // A finished job the store took leaves the table now that no pause waits on its run.
        if recorded { letGoIfFinished(id) }
    }

    /// Records a run's end with the store calls of a command's budget: this actor waits on
    /// those made in its turn (a webhook's record, a read back), and a stalled store must not
    /// hold it longer than a command may wait. An end the store does not take in time is
    /// recorded by the heartbeat (`unrecordedRuns`).
    private func completeBounded(id: String, _ outcome: Outcome) async -> Bool {
        await StoreCallBudget.bounded {
            await complete(id: id, outcome)
        }
    }

    /// Records how a run ended and starts what can start next.
    /// Returns false when the store could not take the end (the heartbeat records it later).
    private func complete(id: String, _ outcome: Outcome) async -> Bool {
        runs[id].lastProgressEvent = nil
        // A finished job whose end the store took leaves the table when this is done.
        var unstored = false
        guard var job = jobs[id] else { return true }
        let ended = RunEnd.Outcome(outcome)
        let record: RunEnd.Record
        switch RunEnd.decide(ended, state: job.state) {
        case .releaseLease:
            releaseLease(id)
            return true
        case .forgetLease:
            runs[id].lease = nil
            return true
        case .alreadyFinished:
            // An earlier run recorded this result (a run that waited for it took it over),
            // or another node finished the job meanwhile: its lease, if any, goes.
            let ended = if case .failure(let error) = outcome { "its failure (\(error))" } else { "its result" }
            logger.notice("job \(id) is \(job.state.rawValue) already; this run's end, \(ended), changes nothing")
            releaseLease(id)
            return true
        case .record(let decided):
            record = decided
        }
        switch (ended, outcome) {
        case (.placed, .success(let result)):
            if result.bytes > job.bytesDone { bytesDownloaded.increment(by: result.bytes - job.bytesDone) }
            let documents = configuration.documentsDirectory + "/"
            job.path = result.path.hasPrefix(documents) ? String(result.path.dropFirst(documents.count)) : result.fileName
            job.filename = result.fileName
            job.sha256 = result.sha256
            job.bytesDone = result.bytes
            job.bytesTotal = result.bytes
            job.completedAt = configuration.clock.now()
            job.error = nil
        case (.retryLater(let delay, _), .failure(let error)):
            logger.info("job \(id) waits \(delay) before its next try: \(error)")
        case (.storeUnavailable, .failure(let error)):
            logger.warning("job \(id) goes back to the queue until its store answers: \(error)")
        case (.failed(let failure), .failure(let error)):
            logger.warning("job \(id) failed: \(failure.code): \(failure.message) (\(error))")
        default:
            break
        }
        job.state = record.state
        if let error = record.error { job.error = error }
        if let retryIn = record.retryIn {
            job.retryAt = configuration.clock.now().addingTimeInterval(Double(retryIn.components.seconds))
        }
        // A `Retry-After` wait carries its failures into the next run's backoff; a wait for
        // the store keeps what it had; anything else forgets them.
        if let failures = record.retryFailures {
            runs[id].retryFailures = failures
        } else if record.retryIn == nil {
            runs[id].retryFailures = nil
        }
        job.speed = 0
        job.eta = nil
        job.node = nil
        job.updatedAt = configuration.clock.now()
        if let cluster, let lease = runs.takeLease(id) {
            unsavedProgress[id] = nil
            noteControlWrite(id)
            let ended = job
            let before = jobs[id]
            // A delete that comes while the store is asked finds the run `recording`, waits
            // for it, and removes a placed file itself.
            do {
                // On the store's threads: this actor answers meanwhile.
                let recorded = try await StoreCalls.run({ try cluster.finishRun(ended, lease: lease) })
                // A read of the change feed that began during the wait is older than this.
                noteControlWrite(id)
                // Deleted meanwhile: nothing to record or show.
                guard jobs[id] != nil else { return true }
                guard recorded else {
                    // Taken back meanwhile: the outcome is another node's to record.
                    leasesLostCounter.increment()
                    try? refresh(id)
                    schedule()
                    return true
                }
            } catch {
                // Shown ended here, recorded by the heartbeat once the store answers (or
                // found taken back then, when the outage outlasted the lease).
                logger.warning("job \(id) ended while the store cannot record it; recorded once it answers: \(error)")
                unrecordedRuns[id] = (job, lease)
            }
            // Deleted while the store was asked: nothing to show.
            guard let now = jobs[id] else { return true }
            // Paused, resumed or edited meanwhile: the store holds what won; read it.
            if now != before, unrecordedRuns[id] == nil {
                try? refresh(id)
                schedule()
                return true
            }
            if unrecordedRuns[id] != nil {
                jobs[id] = job
                events.publish(.job(job))
                schedule()
                return false
            }
        } else {
            do { try repository.update(job) } catch {
                logger.error("cannot save job \(id): \(error)")
                unstored = true
            }
        }
        jobs[id] = job
        events.publish(.job(job))
        // A finished job's limiter goes with its run (a resume makes a new one).
        if job.state == .completed || job.state == .failed { runs[id].limiter = nil }
        if job.state == .completed { webhooks?.record(.completed, job: job) }
        if job.state == .failed {
            webhooks?.record(.failed, job: job)
            failForDependency(waiting(for: id).map { ($0, DependencyCascade.failureReason(of: id)) })
        }
        schedule()
        scheduleWakeUp()
        if !unstored { letGoIfFinished(id) }
        return !unstored
    }
}
