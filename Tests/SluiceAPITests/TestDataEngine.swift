import Crypto
import DownloadEngine
import Foundation
import JobService
import SluiceCore
import Synchronization

/// The download engine for the API tests in process (`RouterHarness`): it plays the Range
/// origin's `/testdata/SIZE` files (docs/origin.md) and `/files/NAME` from a directory without
/// a socket. The bytes are the origin's (`TestDataContent`), written into the job's partial
/// file at their offsets, resumed from the job's checkpoint, hashed and placed with the real
/// engine's placement; the service's rate limiter and `rate` pace them, `delay` holds the first byte, and `status` with
/// `times` fails that many runs with the status as a final answer. The faults that test the
/// engine itself (cuts, retries, validators) are the real engine's business: a URL asking
/// for one fails its job saying so, and its test belongs on `ServiceHarness`.
final class TestDataEngine: RunEngine {
    /// Where `/files/NAME` is read from.
    let files: String
    /// Failed answers given so far, by URL (the origin's `times` counts per URL).
    private let failures = Mutex<[String: Int]>([:])

    init(files: String) { self.files = files }

    func makeRun(_ request: RunRequest) -> any DownloadRun { TestDataRun(request, engine: self) }

    /// Whether this URL's next answer is its fault, counting it.
    func failsNow(_ url: String, times: Int) -> Bool {
        failures.withLock { counts in
            guard counts[url, default: 0] < times else { return false }
            counts[url, default: 0] += 1
            return true
        }
    }
}

final class TestDataRun: DownloadRun {
    let request: RunRequest
    let engine: TestDataEngine
    let events: AsyncStream<DownloadEvent>
    private let reporter: AsyncStream<DownloadEvent>.Continuation
    private let state = Mutex<(committed: Bool, checkpointed: Int64?)>((false, nil))

    init(_ request: RunRequest, engine: TestDataEngine) {
        self.request = request
        self.engine = engine
        (events, reporter) = AsyncStream.makeStream(of: DownloadEvent.self)
    }

    /// What the URL asks for.
    struct Source {
        var size: Int64
        var content: (Range<Int64>) throws -> [UInt8]
        var name: String
        var rate: Int64?
        var delay: Duration?
        var status: Int?
        var times = Int.max
    }

    func source() throws -> Source {
        guard let components = URLComponents(string: request.url) else { throw SluiceError(.invalidURL, "not a URL") }
        let parts = components.path.split(separator: "/")
        let name = parts.last.map(String.init) ?? "download"
        if parts.count == 2, parts[0] == "files" {
            let path = engine.files + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else {
                throw SluiceError(.httpStatus, "the server answered HTTP 404")
            }
            return Source(size: Int64(data.count), content: { Array(data[Int($0.lowerBound)..<Int($0.upperBound)]) }, name: name)
        }
        guard parts.count == 2, parts[0] == "testdata", let size = ByteSize.parse(parts[1]) else {
            throw SluiceError(.httpStatus, "the server answered HTTP 404")
        }
        var seed: UInt64 = 0
        var source = Source(size: size, content: { _ in [] }, name: name)
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "seed": seed = UInt64(value) ?? 0
            case "rate": source.rate = ByteSize.parse(value)
            case "delay": source.delay = .milliseconds(Int(value) ?? 0)
            case "status": source.status = Int(value)
            case "times": source.times = Int(value) ?? .max
            default: throw SluiceError(.invalidField, "TestDataEngine does not play \(item.name)=; test this on ServiceHarness")
            }
        }
        let content = TestDataContent(seed: seed)
        source.content = { content.bytes($0) }
        if let status = source.status, !(400..<500).contains(status) || status == 408 || status == 429 {
            throw SluiceError(.invalidField, "TestDataEngine plays final statuses only, not \(status); test this on ServiceHarness")
        }
        return source
    }

    func run() async throws -> DownloadResult {
        defer { reporter.finish() }
        let source = try source()
        if let status = source.status, engine.failsNow(request.url, times: source.times) {
            throw SluiceError(.httpStatus, "the server answered HTTP \(status)")
        }
        if let delay = source.delay { try await Task.sleep(for: delay) }
        let stored = try await request.checkpoints.load()
        var done: Int64 = 0
        if let stored, stored.url == request.url, stored.totalBytes == source.size, let first = stored.written.first, first.start == 0 {
            done = first.end
        }
        state.withLock { $0.checkpointed = stored == nil ? nil : done }
        if !FileManager.default.fileExists(atPath: request.target.partialPath) {
            _ = FileManager.default.createFile(atPath: request.target.partialPath, contents: nil)
            done = 0
        }
        let file = try FileHandle(forWritingAtPath: request.target.partialPath).orThrow()
        defer { try? file.close() }
        // The service's and the job's rates (`limitRate`) are the real limiter's, consumed as
        // the real engine consumes it: one read buffer at a time.
        let limiter = request.options.rateLimiter
        let chunk = source.rate.map { max(1, min(1 << 20, $0 / 10)) } ?? (limiter == nil ? 1 << 20 : 64 << 10)
        var lastReport = ContinuousClock.now
        var lastCheckpoint = ContinuousClock.now
        do {
            while done < source.size {
                try Task.checkCancellation()
                let end = min(source.size, done + chunk)
                try file.seek(toOffset: UInt64(done))
                try file.write(contentsOf: try source.content(done..<end))
                let written = end - done
                done = end
                try await limiter?.consume(Int(written))
                if let rate = source.rate { try await Task.sleep(for: .seconds(Double(written) / Double(rate))) }
                if ContinuousClock.now - lastReport >= .milliseconds(100) {
                    lastReport = .now
                    report(done, of: source.size)
                }
                if ContinuousClock.now - lastCheckpoint >= .seconds(1) {
                    lastCheckpoint = .now
                    try await save(done, of: source.size)
                }
            }
        } catch {
            // Stopped (or failed): what is on disk is checkpointed, as the real engine does.
            try? file.synchronize()
            try await save(done, of: source.size)
            throw error
        }
        try file.synchronize()
        report(done, of: source.size)
        let digest = try Self.sha256(of: request.target.partialPath)
        if let expected = request.options.expectedChecksum {
            let actual =
                expected.algorithm == .sha256
                ? digest : FileDigests.hex(expected.algorithm, of: try Data(contentsOf: URL(fileURLWithPath: request.target.partialPath)))
            if case .fail(let mismatch) = RetryMachine.verified(digest: actual, expected: expected) { throw mismatch }
        }
        try Task.checkCancellation()
        state.withLock { $0.committed = true }
        let path = try request.target.place(name: request.target.fileName ?? source.name)
        return DownloadResult(path: path, fileName: (path as NSString).lastPathComponent, sha256: digest, bytes: source.size)
    }

    private func report(_ bytes: Int64, of total: Int64) {
        reporter.yield(
            .progress(DownloadProgress(phase: .downloading, bytesDone: bytes, bytesTotal: total, resumable: true, activeConnections: 1)))
    }

    private func save(_ bytes: Int64, of total: Int64) async throws {
        try await request.checkpoints.save(
            DownloadCheckpoint(url: request.url, totalBytes: total, acceptsRanges: true, written: bytes > 0 ? [0..<bytes] : []))
        state.withLock { $0.checkpointed = bytes }
        reporter.yield(.checkpointed(bytes: bytes))
    }

    static func sha256(of path: String) throws -> String {
        let handle = try FileHandle(forReadingAtPath: path).orThrow()
        defer { try? handle.close() }
        var hasher = SHA256()
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty { hasher.update(data: data) }
        return FileDigest.hex(hasher.finalize())
    }

    func segments() -> [JobSegment] { [] }
    var isCommitted: Bool { state.withLock { $0.committed } }
    var checkpointedBytes: Int64? { state.withLock { $0.checkpointed } }
}

extension Optional where Wrapped == FileHandle {
    fileprivate func orThrow() throws -> FileHandle {
        guard let self else { throw SluiceError(.io, "cannot open the partial file") }
        return self
    }
}
