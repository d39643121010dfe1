import AsyncHTTPClient
import Crypto
import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport

/// A download against the built-in origin, with quick retries so fault tests stay fast.
struct EngineHarness: Sendable {
    let port: Int
    let directory: TemporaryDirectory
    let client: Fetcher

    var cache: String { directory.path + "/cache" }
    var documents: String { directory.path + "/documents" }

    static let quickRetry = RetryPolicy(base: 0.02, maximum: 0.1, maximumFailures: 5)

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Asks the origin for `path`'s digest until it has one: an origin answers without it
    /// until it has computed it (in the background), so a test that needs the first
    /// answer of a download to carry it warms the origin's cache first.
    func warmDigest(_ path: String) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try await RawHTTPClient.request(port: port, method: "HEAD", path: path, headers: ["Want-Repr-Digest": "sha-256=9"])
            .header("Repr-Digest") == nil
        {
            guard ContinuousClock.now < deadline else { throw RawHTTPClient.Failure(description: "no digest for \(path)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func checkpoints(_ name: String = "job") -> JSONFileCheckpointStore {
        JSONFileCheckpointStore(path: "\(cache)/\(name).checkpoint.json")
    }

    func download(
        _ path: String, name: String = "job", connections: Int = 4, sha256: String? = nil, checksum: Checksum? = nil,
        fileName: String? = nil, integrity: IntegritySources? = nil, mirrors: [String] = [],
        clock: (any Clock<Duration>)? = nil, progress: @escaping @Sendable (DownloadProgress) -> Void = { _ in }
    ) -> Download {
        var options = DownloadOptions(
            connections: connections, expectedSHA256: sha256, expectedChecksum: checksum, retry: Self.quickRetry, progressInterval: 0.05,
            minimumSplit: 256 << 10
        )
        options.integritySources = integrity
        options.mirrors = mirrors.map(url)
        if let clock {
            options.clock = ElapsedClock(clock)
            // Time runs thousands of times faster: no connection could keep up with a floor.
            options.minimumRate = 0
        }
        let download = Download(
            url: url(path),
            target: DownloadTarget(partialPath: "\(cache)/\(name).part", destination: .directory(documents), fileName: fileName),
            options: options,
            client: client, checkpoints: checkpoints(name)
        )
        // The download's one event stream, read until the run ends.
        Task {
            for await case .progress(let update) in download.events { progress(update) }
        }
        return download
    }

    /// Runs `body` with an origin (recording into `recorder`) and fresh cache/documents dirs.
    static func with(
        recorder: RequestRecorder = RequestRecorder(), _ body: @Sendable (EngineHarness) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            for sub in ["cache", "documents", "origin"] {
                try FileManager.default.createDirectory(atPath: "\(directory.path)/\(sub)", withIntermediateDirectories: true)
            }
            let client = Fetcher(stallTimeout: 5)
            do {
                try await withOrigin(root: "\(directory.path)/origin", recorder: recorder) { port in
                    try await body(EngineHarness(port: port, directory: directory, client: client))
                }
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    /// The SHA-256 of `/testdata/SIZE?seed=N`, computed from the generator.
    static func expectedSHA256(size: Int64, seed: UInt64 = 0) -> String {
        var hasher = SHA256()
        let content = TestDataContent(seed: seed)
        var offset: Int64 = 0
        while offset < size {
            let count = min(1 << 20, size - offset)
            hasher.update(data: content.bytes(offset..<(offset + count)))
            offset += count
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    func sha256(ofFile path: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    func documentNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: documents).sorted()
    }
}

extension RequestRecorder.Entry {
    /// The requested byte range, `bytes=a-b` or open-ended `bytes=a-` up to `total`.
    func requestedRange(total: Int64) -> Range<Int64>? {
        guard let range, let specs = RangeHeader.parse(range), specs.count == 1,
            case .fromTo(let first, let last) = specs[0]
        else { return nil }
        return first..<((last ?? (total - 1)) + 1)
    }
}

/// Whether no two ranges share a byte.
func areDisjoint(_ ranges: [Range<Int64>]) -> Bool {
    let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
    return zip(sorted, sorted.dropFirst()).allSatisfy { $0.upperBound <= $1.lowerBound }
}

/// Whether no range of `asked` touches a byte of `present`.
func avoids(_ asked: [Range<Int64>], _ present: [Range<Int64>]) -> Bool {
    asked.allSatisfy { range in present.allSatisfy { !$0.overlaps(range) } }
}
