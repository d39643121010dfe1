import DownloadEngine
import Foundation
@testable import JobService
import SluiceCore
import Testing

/// What a job's run asks of the engine (`RunRequest(job:…)`), a value built from the job and
/// the runner's configuration.
@Suite struct RunRequestTests {
    static let configuration = JobScheduler.Configuration(cacheDirectory: "/data/cache", documentsDirectory: "/data/documents")

    static func request(_ job: JobSnapshot, configuration: JobScheduler.Configuration = configuration) -> RunRequest {
        RunRequest(
            job: job, partialPath: "/data/cache/j.part", configuration: configuration, rateLimiter: RateLimiter(bytesPerSecond: nil),
            priorFailures: 2, neverRun: true, checkpoints: Nowhere(), logger: .init(label: "test"))
    }

    @Test func aJobsDirIsBeneathTheDocumentsWhichAreItsRoot() {
        var job = JobSnapshot(id: "j", url: "http://127.0.0.1:9/f", state: .running, connections: 3, priority: 0, createdAt: Date())
        let plain = Self.request(job)
        #expect(plain.target.destination == .directory("/data/documents"))
        #expect(plain.target.root == nil)
        job.directory = "music/live"
        let under = Self.request(job)
        #expect(under.target.destination == .directory("/data/documents/music/live"))
        #expect(under.target.root == "/data/documents")
        #expect(under.target.partialPath == "/data/cache/j.part")
        #expect(under.options.connections == 3 && under.options.priorFailures == 2 && under.options.neverRun)
    }

    @Test func certificatesGoUncheckedOnlyWhenTheJobAndTheNodeBothSaySo() {
        var job = JobSnapshot(id: "j", url: "https://127.0.0.1:9/f", state: .running, connections: 1, priority: 0, createdAt: Date())
        var allowing = Self.configuration
        allowing.allowInsecureTLS = true
        #expect(!Self.request(job, configuration: allowing).options.insecure)
        job.insecure = true
        #expect(!Self.request(job).options.insecure)
        #expect(Self.request(job, configuration: allowing).options.insecure)
    }
}

/// Checkpoints kept nowhere: these runs never start.
private struct Nowhere: CheckpointStore {
    func load() async throws -> DownloadCheckpoint? { nil }
    func save(_ checkpoint: DownloadCheckpoint) async throws {}
    func remove() async throws {}
}
