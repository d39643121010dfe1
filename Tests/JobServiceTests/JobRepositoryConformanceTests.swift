import DownloadEngine
import Foundation
import JobService
import JobStore
import Logging
import PostgresStore
import SluiceCore
import SluiceTestSupport
import Testing

/// The contract of `JobRepository`, one suite for every store: SQLite (a single node),
/// PostgreSQL (a cluster's) and the tests' in-memory store, so that a test of the job
/// service on one of them says something about the others.
@Suite struct JobRepositoryConformanceTests {
    enum Store: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres, memory
        var testDescription: String { rawValue }
    }

    /// A fresh, empty store of `kind`; nil when PostgreSQL cannot run here.
    static func open(_ kind: Store, in directory: TemporaryDirectory) async throws -> (any JobRepository)? {
        switch kind {
        case .sqlite:
            return try SQLiteJobRepository(path: directory.path + "/jobs.sqlite")
        case .postgres:
            guard TestPostgres.unavailable == nil else { return nil }
            return try await PostgresJobRepository(
                location: try PostgresLocation(try TestPostgres.newDatabase()), nodeName: "conformance",
                logger: Logger(label: "conformance")
            )
        case .memory:
            return InMemoryJobRepository()
        }
    }

    static func withStore(_ kind: Store, _ body: (any JobRepository) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            guard let store = try await open(kind, in: directory) else {
                print("conformance: \(kind) skipped: \(TestPostgres.unavailable ?? "")")
                return
            }
            try await body(store)
            await (store as? any ClusterStore)?.close(removingNode: true)
        }
    }

    /// Whole seconds, which every store keeps exactly.
    static func job(_ id: String, state: JobState = .queued, second: Double = 0) -> JobSnapshot {
        var job = JobSnapshot(
            id: id, url: "https://example.com/\(id).iso", state: state, connections: 4, priority: 2,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000 + second), requestedFilename: "\(id).iso",
            expectedDigest: String(repeating: "a", count: 64), headers: ["Cookie": "a=b"]
        )
        job.updatedAt = job.createdAt
        job.bytesTotal = 1000
        job.after = []
        job.notify = "https://hooks.example.com/\(id)"
        return job
    }

    static func delivery(_ id: String, job: String, second: Double) -> WebhookDelivery {
        WebhookDelivery(
            id: id, jobID: job, event: .removed, url: "https://hooks.example.com/", body: #"{"event":"removed"}"#,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000 + second)
        )
    }

    @Test(arguments: Store.allCases) func jobsComeBackInTheirOrderWithEveryField(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert(Self.job("a", second: 0))
            try await store.insert(Self.job("b", second: 1))
            try await store.insert(Self.job("c", second: 2))
            var failed = Self.job("b", state: .failed, second: 1)
            failed.error = .init(code: "network", message: "reset")
            failed.bytesDone = 10
            try await store.update(failed)
            try await store.delete(id: "c")
            let jobs = try await store.allJobs()
            #expect(jobs.map(\.id) == ["a", "b"])
            #expect(jobs.first == Self.job("a", second: 0))
            #expect(jobs.last?.state == .failed)
            #expect(jobs.last?.error == .init(code: "network", message: "reset"))
            #expect(jobs.last?.headers == ["Cookie": "a=b"])
            #expect(jobs.last?.notify == "https://hooks.example.com/b")
        }
    }

    /// A batch is stored in one transaction: all of its jobs, in order, or none of them (a
    /// job already stored refuses the batch).
    @Test(arguments: Store.allCases) func aBatchOfJobsIsStoredWholeOrNotAtAll(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert([Self.job("a", second: 0), Self.job("b", second: 1), Self.job("c", second: 2)])
            #expect(try await store.allJobs().map(\.id) == ["a", "b", "c"])
            await #expect(throws: (any Error).self) {
                try await store.insert([Self.job("d", second: 3), Self.job("a", second: 4)])
            }
            #expect(try await store.allJobs().map(\.id) == ["a", "b", "c"])
        }
    }

    /// Every field set, every field back (a store that reads columns by position reads the
    /// right ones).
    @Test(arguments: Store.allCases) func aJobWithEveryFieldSetComesBackTheSame(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            var job = Self.job("full", state: .failed, second: 3)
            job.headers = ["Authorization": "Bearer x", "Accept": "*/*"]
            job.filename = "full.iso"
            job.bytesDone = 400
            job.resumable = true
            job.sha256 = String(repeating: "b", count: 64)
            job.path = "full.iso"
            job.error = .init(code: "checksum_mismatch", message: "the file hashes to something else")
            job.updatedAt = Date(timeIntervalSince1970: 1_800_000_010)
            job.completedAt = Date(timeIntervalSince1970: 1_800_000_011)
            job.retryAt = Date(timeIntervalSince1970: 1_800_000_012)
            job.after = ["a", "b"]
            job.limitRate = 123_456
            job.proxy = "http://proxy.example.com:3128"
            job.insecure = true
            try await store.insert(Self.job("a"))
            try await store.insert(job)
            let back = try await store.allJobs().first { $0.id == "full" }
            #expect(back == job)
        }
    }

    /// A batch stores each field as a single insert does, with nothing set as with
    /// everything set, and more jobs than one statement takes (PostgreSQL's batch is one
    /// multi-row `INSERT` a thousand rows).
    @Test(arguments: Store.allCases) func aBatchStoresEveryFieldAsASingleInsertDoes(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            var full = Self.job("full", state: .failed, second: 3)
            full.headers = ["Authorization": "Bearer x", "Accept": "*/*"]
            full.filename = "full.iso"
            full.requestedFilename = "asked.iso"
            full.bytesTotal = 1000
            full.bytesDone = 400
            full.resumable = true
            full.expectedDigest = String(repeating: "a", count: 64)
            full.sha256 = String(repeating: "b", count: 64)
            full.path = "isos/full.iso"
            full.error = .init(code: "checksum_mismatch", message: "the file hashes to something else")
            full.updatedAt = Date(timeIntervalSince1970: 1_800_000_010)
            full.completedAt = Date(timeIntervalSince1970: 1_800_000_011)
            full.retryAt = Date(timeIntervalSince1970: 1_800_000_012)
            full.after = ["a", "b"]
            full.limitRate = 123_456
            full.notify = "https://hooks.example.com/x"
            full.proxy = "http://proxy.example.com:3128"
            full.insecure = true
            full.directory = "isos"
            full.priority = -7
            let many = (0..<1_100).map { Self.job(String(format: "m%04d", $0), second: 10 + Double($0)) }
            try await store.insert([Self.job("plain", second: 1), full] + many)
            let back = try await store.allJobs()
            #expect(back.count == 1_102)
            #expect(back.first { $0.id == "full" } == full)
            #expect(back.first { $0.id == "plain" } == Self.job("plain", second: 1))
            #expect(back.first { $0.id == "m1099" } == many.last)
        }
    }

    @Test(arguments: Store.allCases) func aDeleteStoresItsDeliveriesWithIt(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert(Self.job("a"))
            try await store.delete(id: "a", deliveries: [Self.delivery("d1", job: "a", second: 5)])
            #expect(try await store.allJobs().isEmpty)
            #expect(try await store.deliveries(jobID: "a").map(\.id) == ["d1"])
            #expect(try await store.pendingDeliveries().map(\.id) == ["d1"])
        }
    }

    @Test(arguments: Store.allCases) func deliveriesAreSavedAgainInPlaceAndLeaveThePendingOnes(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            var first = Self.delivery("d1", job: "a", second: 1)
            let second = Self.delivery("d2", job: "a", second: 2)
            try await store.saveDeliveries([second, first])
            #expect(try await store.deliveries(jobID: "a").map(\.id) == ["d1", "d2"])
            first.attempted(status: 200, error: nil, at: Date(), schedule: WebhookSchedule(), jitter: 0)
            try await store.saveDeliveries([first])
            #expect(try await store.pendingDeliveries().map(\.id) == ["d2"])
            let saved = try await store.deliveries(jobID: "a")
            #expect(saved.count == 2)
            #expect(saved.first?.state == .delivered)
            #expect(saved.first?.attempts == 1)
        }
    }

    /// Issue 21, finding 4: the dispatcher reads one receiver's due deliveries, soonest
    /// first, at most as many as it can send, never those of a job with one under way, and
    /// when the next falls due; never the whole backlog.
    @Test(arguments: Store.allCases) func dueDeliveriesAreReadByReceiverWithALimit(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            func delivery(_ id: String, job: String, second: Double, url: String) -> WebhookDelivery {
                var delivery = Self.delivery(id, job: job, second: second)
                delivery.url = url
                return delivery
            }
            let silent = "https://user:secret@Silent.example.com:8443/hook?token=1"
            var later = delivery("s-later", job: "c", second: 2, url: silent)
            later.attempted(
                status: 503, error: nil, at: Date(timeIntervalSince1970: 1_800_000_003), schedule: WebhookSchedule(), jitter: 0)
            try await store.saveDeliveries([
                delivery("s1", job: "a", second: 1, url: silent), delivery("s2", job: "a", second: 2, url: silent),
                delivery("s3", job: "b", second: 3, url: "https://silent.example.com:8443/other"), later,
                delivery("o1", job: "a", second: 1, url: "http://other.example.com/"),
            ])
            #expect(Set(try await store.deliveryReceivers()) == ["https://silent.example.com:8443", "http://other.example.com"])
            // Before the retry is due (2.5 s after its failed attempt at 3 s).
            let now = Date(timeIntervalSince1970: 1_800_000_005)
            let receiver = "https://silent.example.com:8443"
            #expect(try await store.dueDeliveries(receiver: receiver, now: now, excludingJobs: [], limit: 0).isEmpty)
            #expect(try await store.dueDeliveries(receiver: receiver, now: now, excludingJobs: ["a"], limit: 10).map(\.id) == ["s3"])
            // PostgreSQL claimed what it returned (for a minute): not read again meanwhile.
            let all = try await store.dueDeliveries(receiver: receiver, now: now, excludingJobs: [], limit: 10)
            #expect(all.map(\.id) == (kind == .postgres ? ["s1", "s2"] : ["s1", "s2", "s3"]), "due, soonest first, one receiver's only")
            // Delivered or failed ones are not the receiver's any more; a retry is due later.
            var done = all[0]
            done.attempted(status: 200, error: nil, at: now, schedule: WebhookSchedule(), jitter: 0)
            try await store.saveDeliveries([done])
            if kind != .postgres {
                #expect(try await store.dueDeliveries(receiver: receiver, now: now, excludingJobs: [], limit: 1).map(\.id) == ["s2"])
                #expect(try await store.nextDeliveryAttempt(receiver: receiver) == Date(timeIntervalSince1970: 1_800_000_002))
            } else {
                #expect(try await store.dueDeliveries(receiver: receiver, now: now, excludingJobs: [], limit: 10).isEmpty)
                #expect(try await store.nextDeliveryAttempt(receiver: receiver) == later.nextAttemptAt)
            }
            #expect(try await store.nextDeliveryAttempt(receiver: "https://nobody.example.com") == nil)
        }
    }

    /// Issue 21, finding 11: a deleted job's deliveries go once none is left to try; settled
    /// ones of any job go once past the retention; pending ones stay.
    @Test(arguments: Store.allCases) func settledDeliveriesAreForgotten(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert(Self.job("live"))
            try await store.insert(Self.job("gone"))
            var told = Self.delivery("g1", job: "gone", second: 1)
            let pending = Self.delivery("g2", job: "gone", second: 2)
            try await store.delete(id: "gone", deliveries: [told, pending])
            told.attempted(status: 200, error: nil, at: Date(timeIntervalSince1970: 1_800_000_003), schedule: WebhookSchedule(), jitter: 0)
            try await store.saveDeliveries([told])
            // One call of it is still to be tried: all stay.
            try await store.forgetDeliveries(ofRemovedJob: "gone")
            #expect(try await store.deliveries(jobID: "gone").count == 2)
            var given = pending
            given.refused("forbidden_target: test", at: Date(timeIntervalSince1970: 1_800_000_004))
            try await store.saveDeliveries([given])
            try await store.forgetDeliveries(ofRemovedJob: "gone")
            #expect(try await store.deliveries(jobID: "gone").isEmpty)
            // A live job's are kept, settled or not, until past the retention.
            var old = Self.delivery("l1", job: "live", second: 1)
            old.attempted(status: 200, error: nil, at: Date(timeIntervalSince1970: 1_800_000_002), schedule: WebhookSchedule(), jitter: 0)
            let waiting = Self.delivery("l2", job: "live", second: 3)
            var recent = Self.delivery("l3", job: "live", second: 20)
            recent.attempted(
                status: 204, error: nil, at: Date(timeIntervalSince1970: 1_800_000_021), schedule: WebhookSchedule(), jitter: 0)
            try await store.saveDeliveries([old, waiting, recent])
            try await store.forgetDeliveries(ofRemovedJob: "live")
            #expect(try await store.deliveries(jobID: "live").count == 3)
            #expect(try await store.forgetDeliveries(settledBefore: Date(timeIntervalSince1970: 1_800_000_010)) == 1)
            #expect(try await store.deliveries(jobID: "live").map(\.id) == ["l2", "l3"])
        }
    }

    @Test(arguments: Store.allCases) func aCheckpointRoundTripsAndCarriesItsBytes(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert(Self.job("a"))
            #expect(try await store.checkpoint(id: "a") == nil)
            let checkpoint = DownloadCheckpoint(
                url: "https://example.com/a.iso", validators: Validators(etag: EntityTag("x"), lastModified: 5),
                totalBytes: 1000, acceptsRanges: true, written: [0..<100, 500..<700], fileName: "a.iso"
            )
            try await store.saveCheckpoint(checkpoint, id: "a")
            #expect(try await store.checkpoint(id: "a") == checkpoint)
            #expect(try await store.allJobs().first?.bytesDone == 300)
            try await store.saveCheckpoint(nil, id: "a")
            #expect(try await store.checkpoint(id: "a") == nil)
            // A checkpoint of a job that is gone changes nothing (a run stopped by a delete).
            try await store.saveCheckpoint(checkpoint, id: "gone")
            #expect(try await store.allJobs().map(\.id) == ["a"])
        }
    }

    @Test(arguments: Store.allCases) func aBatchOfCheckpointsIsSavedInItsOrder(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            try await store.insert(Self.job("a"))
            try await store.insert(Self.job("b", second: 1))
            let early = DownloadCheckpoint(url: "https://example.com/a.iso", totalBytes: 1000, acceptsRanges: true, written: [0..<100])
            let later = DownloadCheckpoint(url: "https://example.com/a.iso", totalBytes: 1000, acceptsRanges: true, written: [0..<400])
            let other = DownloadCheckpoint(url: "https://example.com/b.iso", totalBytes: 2000, acceptsRanges: true, written: [0..<50])
            try await store.saveCheckpoints([
                CheckpointWrite(id: "a", checkpoint: early), CheckpointWrite(id: "b", checkpoint: other),
                CheckpointWrite(id: "a", checkpoint: later), CheckpointWrite(id: "gone", checkpoint: early),
            ])
            #expect(try await store.checkpoint(id: "a") == later)
            #expect(try await store.checkpoint(id: "b") == other)
            #expect(try await store.allJobs().map(\.bytesDone) == [400, 50])
            try await store.saveCheckpoints([CheckpointWrite(id: "b", checkpoint: nil), CheckpointWrite(id: "a", checkpoint: early)])
            #expect(try await store.checkpoint(id: "b") == nil)
            #expect(try await store.checkpoint(id: "a") == early)
        }
    }

    /// What a start loads, what a page of finished jobs reads, and the counts (issue 20:
    /// finished jobs are read from the store, not held in memory).
    @Test(arguments: Store.allCases) func liveJobsPagesByStateAndCountsComeFromTheStore(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            let states: [JobState] = [.completed, .queued, .failed, .paused, .completed, .running, .failed, .completed]
            for (index, state) in states.enumerated() { try await store.insert(Self.job("j\(index)", state: state, second: Double(index))) }
            #expect(try await store.liveJobs().map(\.id) == ["j1", "j3", "j5"])
            #expect(try await store.job(id: "j4")?.state == .completed)
            #expect(try await store.job(id: "nope") == nil)
            // Newest first, across the states asked for, a cursor at a time.
            let finished: Set<JobState> = [.completed, .failed]
            #expect(try await store.page(states: finished, limit: 3, before: nil)?.map(\.id) == ["j7", "j6", "j4"])
            #expect(try await store.page(states: finished, limit: 3, before: "j4")?.map(\.id) == ["j2", "j0"])
            #expect(try await store.page(states: [.failed], limit: 10, before: "j6")?.map(\.id) == ["j2"])
            // A cursor of another state still places the page.
            #expect(try await store.page(states: [.completed], limit: 10, before: "j5")?.map(\.id) == ["j4", "j0"])
            #expect(try await store.page(states: finished, limit: 3, before: "nope") == nil)
            // Past an offset (the dashboard scrolled far): counted along the order, any states.
            #expect(try await store.page(states: finished, limit: 2, before: nil, offset: 2)?.map(\.id) == ["j4", "j2"])
            #expect(try await store.page(states: Set(JobState.allCases), limit: 3, before: nil, offset: 6)?.map(\.id) == ["j1", "j0"])
            #expect(try await store.page(states: [.completed], limit: 10, before: "j7", offset: 1)?.map(\.id) == ["j0"])
            #expect(try await store.page(states: finished, limit: 3, before: nil, offset: 99)?.isEmpty == true)
            #expect(try await store.page(states: finished, limit: 3, before: "nope", offset: 1) == nil)
            let counts = try await store.countsByState()
            #expect(counts[.completed] == 3 && counts[.failed] == 2 && counts[.queued] == 1)
            #expect(counts[.paused] == 1 && counts[.running] == 1)
        }
    }

    /// A key is dated with the job it made, on the service's clock (a test's clock, or one
    /// that differs from the store's host's), as the scheduler asks for it. It was dated with
    /// the store's own time, so a key lived on the wrong clock.
    @Test(arguments: Store.allCases) func anIdempotencyKeyNamesItsJobForItsLifetime(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            // Made 2027-01-15 (`job(_:)`'s date), whatever the date here.
            let job = Self.job("a")
            try await store.insert(job, idempotencyKey: "key-1")
            #expect(try await store.jobID(idempotencyKey: "key-1", since: job.createdAt.addingTimeInterval(-60)) == "a")
            #expect(try await store.jobID(idempotencyKey: "key-1", since: job.createdAt.addingTimeInterval(60)) == nil)
            #expect(try await store.jobID(idempotencyKey: "key-2", since: .distantPast) == nil)
        }
    }

    @Test(arguments: Store.allCases) func theQueuesSettingsAreNoneUntilSaved(store kind: Store) async throws {
        try await Self.withStore(kind) { store in
            #expect(try await store.queueSettings() == nil)
            let settings = QueueSettings(paused: true, maxActive: 7, limitRate: 1_000_000)
            try await store.saveQueueSettings(settings)
            #expect(try await store.queueSettings() == settings)
            try await store.ping()
        }
    }
}
