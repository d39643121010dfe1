import DownloadEngine
import Foundation
import JobService
import Logging
import PostgresStore
import SluiceCore
import SluiceTestSupport
import Testing

/// The runner on the real engine against the test origin, for what a run does that no API
/// adds to: a started scheduler over the in-memory store (or a cluster node on PostgreSQL),
/// and the origin's URLs.
struct RunnerOnTheOrigin: Sendable {
    let scheduler: JobScheduler
    let port: Int
    let directory: TemporaryDirectory
    let recorder: RequestRecorder

    /// On the in-memory store, or, when `scripts/test.sh` runs these suites again on
    /// PostgreSQL (`SLUICE_TEST_STORE=postgres`), as a cluster node on a database of its own,
    /// with the node's services running as `sluice serve` runs them.
    static func with(
        maxActive: Int = 3, client: @escaping @Sendable () -> Fetcher = { Fetcher() },
        configure: @escaping @Sendable (inout JobScheduler.Configuration) -> Void = { _ in },
        _ body: @Sendable (RunnerOnTheOrigin) async throws -> Void
    ) async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { root in
            try await withOrigin(root: root.path, recorder: recorder) { port in
                try await withTemporaryDirectory { directory in
                    let run = { (scheduler: JobScheduler) in
                        try await body(RunnerOnTheOrigin(scheduler: scheduler, port: port, directory: directory, recorder: recorder))
                    }
                    if onPostgres {
                        try await withClusterNode(directory, maxActive: maxActive, client: client, configure: configure, run)
                    } else {
                        try await JobServiceTests.withScheduler(
                            directory, store: InMemoryJobRepository(), maxActive: maxActive, settleLimit: .seconds(15),
                            client: client, configure: configure, run)
                    }
                }
            }
        }
    }

    static var onPostgres: Bool { ProcessInfo.processInfo.environment["SLUICE_TEST_STORE"] == "postgres" }

    /// A cluster node on a new PostgreSQL database: its store writers, change feed,
    /// heartbeat, rescuer, progress writer and membership running beside `body`.
    static func withClusterNode(
        _ directory: TemporaryDirectory, maxActive: Int, client makeClient: () -> Fetcher,
        configure: (inout JobScheduler.Configuration) -> Void, _ body: (JobScheduler) async throws -> Void
    ) async throws {
        var logger = Logger(label: "runner-on-postgres")
        logger.logLevel = .critical
        var configuration = try JobServiceTests.configuration(directory, maxActive: maxActive, settleLimit: .seconds(15))
        configuration.nodeName = "runner"
        configure(&configuration)
        let store = try await PostgresJobRepository(
            location: try PostgresLocation(try TestPostgres.newDatabase()), nodeName: "runner", logger: logger)
        let client = makeClient()
        try await JobServiceTests.running(
            client, { try await JobScheduler(configuration: configuration, repository: store, client: client, logger: logger) },
            services: { $0.clusterMembership + $0.storeWriters + $0.clusterServices }, body)
    }

    func testdata(_ path: String) -> String { "http://127.0.0.1:\(port)" + path }

    func create(_ fields: [String: Any]) async throws -> String {
        try await scheduler.create(try JobServiceTests.request(fields)).job.id
    }

    @discardableResult
    func waitFor(_ id: String, _ condition: @escaping (JobSnapshot) -> Bool) async throws -> JobSnapshot {
        try await JobServiceTests.waitFor(id, on: scheduler, condition)
    }

    /// An edit as `PATCH /jobs/ID` takes it, from its JSON fields.
    func edit(_ id: String, _ fields: [String: Any]) async throws -> JobSnapshot {
        try await scheduler.edit(id: id, try JSONDecoder().decode(JobPatch.self, from: JSONSerialization.data(withJSONObject: fields)))
    }

    /// The error code a command throws, or nil when it succeeds.
    func refusal(_ command: () async throws -> JobSnapshot) async -> String? {
        do {
            _ = try await command()
            return nil
        } catch let error as SluiceError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    func holdsTestData(_ job: JobSnapshot, size: Int, seed: UInt64 = 0) -> Bool {
        JobServiceTests.holdsTestData(job, in: directory, size: size, seed: seed)
    }

    /// What the origin has sent of `/testdata/` so far.
    var bytesServed: Int64 { recorder.bytesSent(pathPrefix: "/testdata/") }
}
