public import DownloadEngine
import Foundation
public import Logging
import SluiceSystem
import Synchronization
public import Metrics
public import ServiceLifecycle
public import SluiceCore

/// Owns every job: creates, lists, pauses, resumes and deletes them, starts up to
/// `maxActive` downloads by priority then age, and publishes every change.
///
/// Live jobs are held in memory (a few hundred bytes each); what the scheduler decides is
/// written behind it (`JobWrites`), and what the store must decide first (a create, a delete,
/// a cluster's control write) is awaited, never blocking: every store call is async.
/// Downloads run as tasks the scheduler starts and cancels.
public actor JobScheduler {
    /// How a run of a download ended: the result of a finished one, or why it stopped.
    typealias Outcome = Result<DownloadResult, any Error>

    struct Run: RunHandle {
        let task: Task<Outcome, Never>
        let generation: Int
        let download: any DownloadRun
    }

    let configuration: Configuration
    let repository: any JobRepository
    /// Commits the checkpoints of every run here together (group commit).
    nonisolated let checkpointWriter: CheckpointWriter
    /// Writes the job changes this node decides, behind it, in order (`JobWrites`).
    nonisolated let writes: JobWrites
    /// The writers of job changes and of checkpoints, and a cluster node's lease releases,
    /// as services for the group: they run until the downloads have stopped
    /// (docs/job-service.md, "Services and shutdown"). A scheduler no group runs (a test) runs
    /// them itself.
    public nonisolated var storeWriters: [any Service] { [writes, checkpointWriter] + (leaseReleaser.map { [$0] } ?? []) }
    /// The shared store when this node is one of a cluster's; nil for a single node.
    let cluster: (any ClusterStore)?
    /// Gives stopped runs' leases back to a cluster's store, behind the runner.
    nonisolated let leaseReleaser: LeaseReleaser?
    /// A cluster node's runs' progress on its way to the store.
    nonisolated let progress: ClusterProgress?
    /// The decisions: every job's runtime here and the rules that change it (`JobMachine`);
    /// this actor runs the actions it returns.
    var machine: JobMachine<Run>
    /// How this node comes to run a job (its queue's own starts, or claims under leases).
    var claiming: Claiming { machine.claiming }
    /// The reads, answered off this actor (`JobReads`).
    nonisolated let reads: JobReads
    /// Whether the store answered recently enough (`StoreHealth`).
    nonisolated var storeAnswers: Bool { reads.storeAnswers }
    public nonisolated let nodeName: String
    let startedAt = Date()
    let client: Fetcher
    /// Makes each run of a download (`RunEngine`): the real engine on `client`, or a
    /// test's scripted one.
    let engine: any RunEngine
    /// What the service last saw of its store: background store work waits while it does
    /// not answer (`StoreHealth`); nil to assume it does.
    nonisolated let storeHealth: StoreHealth?
    /// Told when jobs end or go; nil for no webhooks.
    let webhooks: WebhookDispatcher?
    let logger: Logger
    public nonisolated let events = JobEventBroadcaster()
    /// The queue's rate, shared by every download; each job with a rate of its own has a
    /// limiter under it.
    let queueLimiter: RateLimiter
    /// The queue's settings (`GET`/`PATCH /queue`), as stored; readable without this actor.
    var settings: QueueSettings {
        get { settingsBox.withLock { $0 } }
        set { settingsBox.withLock { $0 = newValue } }
    }
    nonisolated let settingsBox: Mutex<QueueSettings>
    /// The schedule, what it sets now and when that next changes (`QueueSchedule`).
    var timetable: QueueSchedule
    /// What the queue runs with: its own settings under the schedule (`QueueInEffect`);
    /// readable without this actor.
    var inEffect: QueueInEffect {
        get { inEffectBox.withLock { $0 } }
        set { inEffectBox.withLock { $0 = newValue } }
    }
    nonisolated let inEffectBox: Mutex<QueueInEffect>
    /// The disk's free space and the jobs waiting for more (`DiskWatch`); readable without
    /// this actor.
    var disk: DiskWatch {
        get { diskBox.withLock { $0 } }
        set { diskBox.withLock { $0 = newValue } }
    }
    nonisolated let diskBox = Mutex(DiskWatch())
    /// The free space kept: `--min-free-space`, else the default for the file system seen.
    var diskFloor: Int64 = 0
    /// The quotas and the bytes counted against them (`QuotaLedger`); readable without this
    /// actor.
    var quota: QuotaLedger {
        get { quotaBox.withLock { $0 } }
        set { quotaBox.withLock { $0 = newValue } }
    }
    nonisolated let quotaBox = Mutex(QuotaLedger())
    /// Bytes counted against the quotas and not added to the stored ledger yet.
    var quotaUnsaved: Int64 = 0
    /// What holds queued jobs back now: the schedule's window, the disk.
    var holds: QueueHolds {
        var holds = inEffect.holds
        let disk = disk
        holds.diskLow = disk.low
        holds.diskWaiting = Set(disk.waiting.keys)
        holds.quotaReached = quota.reached
        return holds
    }
    let bytesDownloaded: Counter

    /// Every job this node holds, readable without this actor (`JobTable`).
    public nonisolated let jobs = JobTable()
    /// Job ids, oldest first.
    var order: [String] { jobs.orderedIDs }
    /// What this node keeps about each job beside its snapshot: its run (running, stopping,
    /// or recording its end), lease, edit, retry count, limiter, last progress event.
    var runs: JobRuntimes<Run> {
        get { machine.runs }
        _modify { yield &machine.runs }
    }
    /// Nothing kept about any job beside the table (the tests' bookkeeping check).
    var hasNoRuns: Bool { runs.isEmpty }
    var generation = 0
    var isShuttingDown = false
    /// Jobs the start moved back to the queue (running when the last process stopped), to
    /// store as such.
    var requeuedAtStart: [String] = []
    /// The states of finished jobs that live jobs name in `after`, once they have left the
    /// table (a single node holds live jobs only).
    var finishedDependencies: [String: JobState] = [:]
    /// Set while a bulk action runs, so that a slot one job frees is not given to a job the
    /// same action is about to stop; the action schedules once at its end.
    /// (A count: bulk actions may overlap now that their store calls are awaited.)
    var schedulingHeld = 0
    /// A cluster node's claim under way (`claimLater`), and whether another was asked for.
    var claimTask: Task<Void, Never>?
    var claimAgain = false
    /// A `PATCH /queue` under way, and those waiting for their turn.
    var queueUpdating = false
    var queueUpdateWaiters: [CheckedContinuation<Void, Never>] = []
    /// Creates under way with an idempotency key, by key: a second create with the key waits
    /// for the first and answers its job.
    var creatingWithKey: [String: (task: Task<JobSnapshot, any Error>, request: String)] = [:]
    /// Creates whose job starts at once, while the store inserts it: their slots are kept.
    var startingInCreation = 0
    /// Wakes the scheduler when the earliest waiting job may start again.
    var wakeUp: Task<Void, Never>?

    /// What a cluster node keeps beside its jobs (`ClusterBook`): nothing on a single node.
    var book: ClusterBook
    let claimsCounter: Counter
    let leasesLostCounter: Counter
    let rescuedCounter: Counter
    let runningGauge: Gauge

    public init(
        configuration: Configuration, repository: any JobRepository, client: Fetcher, webhooks: WebhookDispatcher? = nil,
        storeHealth: StoreHealth? = nil, metrics: any MetricsFactory = MetricsSystem.factory,
        logger: Logger = Logger(label: "sluice.jobs"), engine: (any RunEngine)? = nil
    ) async throws {
        let cluster = repository as? any ClusterStore
        var start = try await StoredStart.read(repository, cluster: cluster)
        let stored = start.settings
        self.configuration = configuration
        self.storeHealth = storeHealth
        self.repository = repository
        self.checkpointWriter = CheckpointWriter(repository: repository)
        self.writes = JobWrites(repository: repository)
        self.cluster = cluster
        self.leaseReleaser = cluster.map { LeaseReleaser(cluster: $0, logger: logger) }
        self.progress = cluster.map { ClusterProgress(cluster: $0, logger: logger) }
        self.machine = JobMachine(claiming: cluster == nil ? .own : .leased)
        self.book = ClusterBook(keeps: cluster != nil)
        self.reads = JobReads(
            jobs: jobs, repository: repository, events: events, storeHealth: storeHealth,
            knowsEveryFinishedJob: machine.claiming.knowsEveryFinishedJob
        )
        self.nodeName = cluster?.nodeName ?? configuration.nodeName
        self.client = client
        self.engine = engine ?? FetcherEngine(client: client)
        self.webhooks = webhooks
        self.logger = logger
        let settings = stored ?? QueueSettings(maxActive: configuration.maxActive, limitRate: configuration.limitRate)
        if let stored, stored.maxActive != configuration.maxActive || stored.limitRate != configuration.limitRate {
            logger.notice(
                "the queue's stored settings apply (maxActive \(stored.maxActive), limitRate \(stored.limitRate.map(String.init) ?? "none")), not --max-active or --limit-rate: change them with PATCH /queue"
            )
        }
        self.settingsBox = Mutex(settings)
        // `--schedule FILE` replaces the stored schedule, for the whole cluster.
        if let given = configuration.schedule, given != start.schedule {
            try await repository.saveScheduleText(given.json.text)
            logger.notice("the schedule from --schedule is stored and in effect: \(given.rules.count) rule(s) in \(given.timeZone)")
        }
        var timetable = QueueSchedule(configuration.schedule ?? start.schedule ?? .empty)
        timetable.evaluate(at: configuration.clock.now())
        let inEffect = timetable.inEffect(own: settings, at: configuration.clock.now())
        self.timetable = timetable
        self.inEffectBox = Mutex(inEffect)
        self.queueLimiter = RateLimiter(bytesPerSecond: inEffect.limitRate, clock: configuration.clock)
        self.bytesDownloaded = Counter(label: "sluice_downloaded_bytes_total", dimensions: [], factory: metrics)
        let node = [("node", nodeName)]
        claimsCounter = Counter(label: "sluice_cluster_claims_total", dimensions: node, factory: metrics)
        leasesLostCounter = Counter(label: "sluice_cluster_leases_lost_total", dimensions: node, factory: metrics)
        rescuedCounter = Counter(label: "sluice_cluster_rescued_jobs_total", dimensions: node, factory: metrics)
        runningGauge = Gauge(label: "sluice_node_running_jobs", dimensions: node, factory: metrics)
        if start.recovered > 0 { logger.notice("requeued \(start.recovered) job(s) this node was running before it stopped") }
        jobs.setStoredOnly(start.finishedCounts)
        self.finishedDependencies = start.finishedDependencies
        if claiming.requeuesEveryRunningJobAtStart { requeuedAtStart = start.requeueRunning() }
        if let ledger = start.quota { quotaBox.withLock { $0 = ledger } }
        jobs.load(start.live)
        jobs.stampHolds(holds, now: configuration.clock.now())
        start.live = []
        // Loading read every row once: give the memory that went back to the heap back to the
        // system, so that a restart's peak does not stay the service's size.
        HeapTrim.releaseFreeMemory()
        writes.tell(
            written: { [weak self] results in await self?.written(results) },
            failed: { [logger] error in logger.error("cannot save job changes yet (kept, written once the store answers): \(error)") }
        )
    }

    /// Starts what the previous run left queued or running.
    public func start() {
        // Only the jobs the start requeued (they were running) are written again, not every
        // queued one.
        for id in requeuedAtStart { if let job = jobs[id] { writes.put(job, expected: nil, deliveries: []) } }
        requeuedAtStart = []
        schedule()
        scheduleWakeUp()
    }

    // MARK: Queries

    // Reads come from the job table, not through this actor (`JobReads`).

    public nonisolated func job(id: String) async throws -> JobSnapshot? { try await reads.job(id: id) }
    public nonisolated func list(
        states: Set<JobState>? = nil, limit: Int = 100, after: String? = nil, offset: Int = 0
    ) async throws -> [JobSnapshot] {
        try await reads.list(states: states, limit: limit, after: after, offset: offset)
    }
    public nonisolated func list(heldBy hold: JobHold, limit: Int, after: String?, offset: Int) async throws -> [JobSnapshot] {
        guard let page = jobs.list(heldBy: hold, limit: limit, after: after, offset: offset) else {
            throw SluiceError(.invalidField, "after names no job", field: "after")
        }
        return page
    }
    public nonisolated func countsByState() -> [JobState: Int] { jobs.countsByState() }
    public nonisolated func subscribe(jobID: String? = nil, lastEventID: String? = nil) async throws -> JobSubscription {
        try await reads.subscribe(jobID: jobID, lastEventID: lastEventID)
    }
    /// A job's webhook deliveries, oldest first.
    public nonisolated func deliveries(id: String) async throws -> [WebhookDelivery] {
        guard try await job(id: id) != nil else { throw SluiceError(.notFound, "no job \(id)") }
        return try await webhooks?.deliveries(jobID: id) ?? []
    }
    /// At most this many jobs in an event stream's first snapshot (docs/api.md, "Events").
    public static let snapshotLimit = JobReads.snapshotLimit
    /// `JobReads.jobInPlace`.
    nonisolated func jobInPlace(id: String) async throws -> JobSnapshot? { try await reads.jobInPlace(id: id) }
    nonisolated func storedFinishedJob(_ id: String) async throws -> JobSnapshot? { try await reads.storedFinishedJob(id) }

    /// Which parts of the job's file are on disk: live from a running download, else from
    /// its checkpoint; a completed job's file is one whole segment.
    public func segments(id: String) async throws -> [JobSegment] {
        guard let job = try await jobInPlace(id: id) else { throw SluiceError(.notFound, "no job \(id)") }
        if let run = runs.running(id) { return run.download.segments() }
        if job.state == .completed {
            let size = job.bytesTotal ?? job.bytesDone
            return size > 0 ? [JobSegment(start: 0, end: size, done: size, active: false)] : []
        }
        guard let checkpoint = try await repository.checkpoint(id: id), let total = checkpoint.totalBytes else { return [] }
        return JobSegment.stored(written: checkpoint.writtenRanges, total: total)
    }

    // MARK: Commands (`JobCommands`, `CreateCommand`, `EditCommand`, `BulkCommands`)

    public func pause(id: String) async throws -> JobSnapshot { try await JobCommands.pause(id: id, on: self) }
    public func resume(id: String) async throws -> JobSnapshot { try await JobCommands.resume(id: id, on: self) }
    public func delete(id: String, deleteFile: Bool) async throws { try await JobCommands.delete(id: id, deleteFile: deleteFile, on: self) }

    public func create(_ request: CreateJobRequest, idempotencyKey: String? = nil) async throws -> (job: JobSnapshot, replayed: Bool) {
        try await CreateCommand.create(request, idempotencyKey: idempotencyKey, on: self)
    }
    public func createAll(_ requests: [CreateJobRequest]) async throws -> [JobSnapshot] {
        try await CreateCommand.createAll(requests, on: self)
    }

    /// `PATCH /queue` (`QueueCommand`).
    public func updateQueue(_ patch: QueueSettingsPatch) async throws -> QueueStatus { try await QueueCommand.update(patch, on: self) }
    /// `GET /schedule`.
    public func scheduleStatus() -> ScheduleStatus { ScheduleStatus(schedule: timetable.schedule, inEffect: inEffect) }
    /// `PUT /schedule` (`ScheduleCommand`).
    public func replaceSchedule(_ schedule: Schedule) async throws -> ScheduleStatus {
        try await ScheduleCommand.replace(with: schedule, on: self)
    }
    /// `PATCH /jobs/ID` (`EditCommand`).
    public func edit(id: String, _ patch: JobPatch) async throws -> JobSnapshot { try await EditCommand.edit(id: id, patch, on: self) }

    public func pauseAll(_ selection: JobSelection) async throws -> [JobSnapshot] { try await BulkCommands.pauseAll(selection, on: self) }
    public func resumeAll(_ selection: JobSelection) async throws -> [JobSnapshot] { try await BulkCommands.resumeAll(selection, on: self) }
    public func deleteAll(states: Set<JobState>, deleteFile: Bool) async throws -> Int {
        try await BulkCommands.deleteAll(states: states, deleteFile: deleteFile, on: self)
    }

    /// Stops every download, each after a checkpoint; their jobs stay `running` in the
    /// store so that the next start resumes them.
    public func shutdown() async {
        isShuttingDown = true
        for id in runs.runningIDs {
            var lifecycle = JobLifecycle(state: .running)
            if lifecycle.serviceStopping() == .stopDownload { stop(id) }
        }
        for run in runs.endingRuns { _ = await run.task.value }
        wakeUp?.cancel()
        events.finishAll()
        // What is decided is stored before the shutdown goes on (as long as the store
        // answers); a cluster node leaves the cluster later (`ClusterMembership`), once the
        // writers have stopped.
        await StoreCallBudget.$current.withValue(StoreCallBudget(.seconds(2))) {
            for id in jobs.orderedIDs where writes.isPending(id) { try? await writes.stored(id) }
        }
        // The quota's counts since they were last stored (every 5 s otherwise).
        await QuotaCommand.exchangeCounts(on: self)
    }

    // MARK: Internals

    /// Runs a user's event through the state machine, acts on its answer, and lets the queue
    /// start what it can. In a cluster the store decides first: a store that cannot be
    /// written changes nothing (503), and a job another node changed first is read again
    /// (409). A single node decides in memory and stores behind (`JobWrites`).
    @discardableResult
    func apply(_ id: String, _ event: (inout JobLifecycle) -> JobLifecycle.Action) async throws -> JobSnapshot {
        // Its run placed the file and is recording its end (a cluster node writes it under
        // its lease first): the job is completed once that is done. Waited for (within the
        // run's own store budget), so that the answer and the job shown after it agree.
        if runs[id].placedFile, let recording = runs.ending(id) {
            _ = await recording.task.value
            StoreCallBudget.renew()
        }
        // A node whose commands are written first: its own change of the job still queued is
        // written with this one (the store holds the state that change expected); one being
        // written goes first.
        // A write of it under way lands first: the one still queued, taken below, expects the
        // state that one leaves (resuming a job whose failure was being written raced it, and
        // the store, still queued, refused the resume's write as changed elsewhere: 409).
        if claiming.writesCommandsFirst { try await writes.landed(id) }
        let queued = claiming.writesCommandsFirst ? writes.take(id) : nil
        if claiming.writesCommandsFirst, queued == nil { try await writes.stored(id) }
        let putBack = { if let queued { self.writes.put(queued.job, expected: queued.expected, deliveries: queued.deliveries) } }
        guard let before = jobs[id] else {
            putBack()
            throw SluiceError(.notFound, "no job \(id)")
        }
        let now = configuration.clock.now()
        let decided: (job: JobSnapshot, actions: [JobAction<Run>], storeFirst: StoreFirst?)
        do { decided = try machine.command(before, now: now, pendingWrite: queued != nil, event) } catch {
            putBack()
            throw error
        }
        if case .controlWrite(let job, let expected)? = decided.storeFirst {
            guard try await ClusterWrites.controlWrite(job, expected: queued?.expected ?? expected, with: queued, on: self) else {
                // Moved on here while the store was asked (a run ended; its progress does not
                // count): the store holds what won; read it.
                try? await refresh(id)
                schedule()
                guard let now = jobs[id] else { throw SluiceError(.notFound, "no job \(id)") }
                return now
            }
            perform(machine.commandWritten(before, now: now, event))
        } else {
            perform(decided.actions)
        }
        schedule()
        // As scheduling left it (it may have started the job).
        guard let job = jobs[id] else { throw SluiceError(.notFound, "no job \(id)") }
        return job
    }

    /// Runs the scheduler's own event through the state machine and acts on its answer,
    /// without scheduling (it is called while scheduling). The change is stored behind; in a
    /// cluster only while the stored job is still in the state this node saw (else it is
    /// read back).
    @discardableResult
    func transition(_ id: String, _ event: (inout JobLifecycle) -> JobLifecycle.Action) throws -> JobSnapshot {
        guard let before = jobs[id] else { throw SluiceError(.notFound, "no job \(id)") }
        let (job, actions) = try machine.lifecycle(before, now: configuration.clock.now(), event)
        perform(actions)
        return jobs[id] ?? job
    }

    /// Records a change to a job: in the table and to subscribers at once, in the store
    /// behind (`JobWrites`), with the webhook deliveries that tell of it. In a cluster the
    /// write is made only while the stored job is still in the state this node saw; when
    /// another node changed it first, the stored job is read back (`written`).
    func update(_ job: JobSnapshot, deliveries: [WebhookDelivery] = []) {
        record(job, expected: machine.fenced(jobs[job.id]?.state), deliveries: deliveries)
    }

    /// `JobAction.record`: the table and subscribers at once, the store behind, a write
    /// fenced by `expected` noted as this node's (a read of the change feed that began
    /// before it is older).
    func record(_ job: JobSnapshot, expected: JobState?, deliveries: [WebhookDelivery]) {
        var job = job
        job.updatedAt = configuration.clock.now()
        // Started, paused or gone: no longer waiting for space.
        if job.state != .queued, disk.waiting[job.id] != nil { disk.forget(job.id) }
        job.heldBy = holds.heldBy(job, now: job.updatedAt)
        jobs[job.id] = job
        events.publish(.job(job))
        if expected != nil { noteControlWrite(job.id) }
        writes.put(job, expected: expected, deliveries: deliveries)
    }

    /// Runs what the machine decided, in order. (What the store must take first, the machine
    /// asks for apart, `StoreFirst`: the command or the run's end awaits it.)
    func perform(_ actions: [JobAction<Run>]) {
        for action in actions {
            switch action {
            case .record(let job, let expected, let tell):
                record(job, expected: expected, deliveries: tell.map { webhooks?.deliveries(for: $0, job: job) ?? [] } ?? [])
            case .show(var job):
                job.heldBy = holds.heldBy(job, now: configuration.clock.now())
                jobs.insertByAge(job)
                events.publish(.job(job))
            case .keep(var job):
                job.heldBy = holds.heldBy(job, now: configuration.clock.now())
                jobs[job.id] = job
            case .shownEnd(let job):
                book.shownEnds.shown(job)
            case .start(let job, let claim):
                startDownload(job, claim: claim)
            case .setRate(let id, let rate):
                runs[id].limiter?.setRate(rate)
            case .waitForSpace(let id):
                // The space as it is now, after the run gave back what it could: the job waits
                // for more than that (not for what its own partial file freed).
                DiskSpace.lookNow(on: self)
                disk.wait(id, floor: diskFloor)
                logger.notice("job \(id) waits for disk space, its bytes kept")
            case .note(let line):
                logger.info("\(line)")
            case .cancel(let run):
                run.task.cancel()
            case .claim(let count):
                ClusterClaims.claimLater(free: count, on: self)
            case .releaseLease(let id):
                releaseLease(id)
            case .failDependents(let id, let reason):
                DependencyStates.fail(DependencyStates.waiting(for: id, on: self).map { ($0, reason) }, on: self)
            case .failCascade(let id, let reason):
                DependencyStates.fail([(id, reason)], on: self)
            case .askStore(let ids):
                DependencyStates.askStore(about: ids, on: self)
            case .schedule:
                schedule()
                scheduleWakeUp()
            case .letGo(let id):
                letGoIfFinished(id)
            case .keepUnrecorded(let job, let lease):
                book.unrecordedRuns[job.id] = (job, lease)
            }
        }
    }

    /// What `JobWrites` wrote: a finished job whose state is stored leaves the table; a
    /// cluster's control write another node beat is read back.
    func written(_ results: [(id: String, write: JobWrites.Write, outcome: JobWrites.Outcome)]) async {
        var delivered: [WebhookDelivery] = []
        for result in results {
            switch result.outcome {
            case .stored:
                // A read of the change feed that began before the commit is older than this.
                noteControlWrite(result.id)
                delivered += result.write.deliveries
                letGoIfFinished(result.id)
            case .refused:
                logger.info("job \(result.id) changed on another node first; reading it again")
                await StoreCallBudget.bounded(configuration.storeBudget) { try? await refresh(result.id) }
                schedule()
            }
        }
        if !delivered.isEmpty { webhooks?.stored(delivered) }
    }

    /// The partial file of a job's run: one per lease in a cluster (`PartialFileTakeover`).
    func partialPath(_ id: String) -> String {
        if let lease = runs[id].lease {
            return PartialFileTakeover.path(cacheDirectory: configuration.cacheDirectory, id: id, epoch: lease.epoch)
        }
        return configuration.cacheDirectory + "/" + id + ".part"
    }

    /// Arranges for `schedule()` to run when the earliest waiting job may start.
    func scheduleWakeUp() {
        wakeUp?.cancel()
        guard let earliest = jobs.earliestRetry else { return }
        let clock = configuration.clock
        wakeUp = Task { [weak self] in
            do { try await clock.sleep(until: earliest.addingTimeInterval(0.01)) } catch { return }
            guard !Task.isCancelled else { return }
            await self?.wake()
        }
    }

    func wakeNow() { wake() }

    private func wake() {
        // A `startAt` passed: what holds those jobs now (the window, or nothing).
        jobs.stampHolds(holds, now: configuration.clock.now())
        schedule()
        scheduleWakeUp()
    }

    func stop(_ id: String) {
        runs.stop(id)?.task.cancel()
    }
}
