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

extension RunRequestTests {
    /// A checksum file's entry is looked up by the job's URL's name, whichever source serves
    /// the file (a mirror named otherwise must not be checked against its own entry: second
    /// reading of issue 39).
    @Test func theChecksumNameIsTheJobsURLsNameWhateverMirrorServes() {
        var job = JobSnapshot(
            id: "j", url: "https://u:p@example.com/dl/tool-amd64.tar.gz?x=1", state: .running, connections: 1, priority: 0,
            createdAt: Date())
        job.integrity.checksumURL = "https://example.com/SHA256SUMS"
        job.integrity.mirrors = ["https://mirror.example/tool-0.9.tar.gz"]
        #expect(Self.request(job).options.integritySources?.checksumName == "tool-amd64.tar.gz")
        job.integrity.checksumName = "given.tar.gz"
        #expect(Self.request(job).options.integritySources?.checksumName == "given.tar.gz")
    }

    /// A digest a header announced is the served version's: a later answer without one
    /// clears it (it was kept and held against the new version: second reading of issue 39);
    /// a digest given on create is never replaced.
    @Test func aHeadersDigestIsReplacedOrClearedByTheNextAnswerAndAGivenOneIsNot() {
        var job = JobSnapshot(id: "j", url: "https://example.com/f", state: .running, connections: 1, priority: 0, createdAt: Date())
        let old = Checksum(.sha256, hex: String(repeating: "1", count: 64))!
        let new = Checksum(.md5, hex: String(repeating: "2", count: 32))!
        var announced = IntegrityFinding(expected: old, source: "repr-digest")
        announced.fromHeaders = true
        job.learnt(announced)
        #expect(job.expectedChecksum == old && job.integrity.expectedSource == "repr-digest")
        announced.expected = new
        announced.source = "content-md5"
        job.learnt(announced)
        #expect(job.expectedChecksum == new && job.integrity.expectedSource == "content-md5")
        var none = IntegrityFinding()
        none.fromHeaders = true
        job.learnt(none)
        #expect(job.expectedChecksum == nil && job.integrity.expectedSource == nil)
        // Given on create: what a header says does not replace it.
        job.expectedChecksum = old
        job.learnt(announced)
        job.learnt(none)
        #expect(job.expectedChecksum == old && job.integrity.expectedSource == nil)
    }
}
