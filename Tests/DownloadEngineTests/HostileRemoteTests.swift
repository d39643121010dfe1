import AsyncHTTPClient
import Crypto
import DownloadEngine
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// Issue 10's remotes that misbehave: no validators while the content changes, a weak
/// ETag with a date, an ETag that disappears, a redirect to another origin.
@Suite struct HostileRemoteTests {
    static let size = 2 << 20

    /// Version `v` of the file: every version differs at every offset.
    static func content(version: Int, _ range: Range<Int>) -> [UInt8] {
        range.map { UInt8(truncatingIfNeeded: $0 &* 31 &+ version &* 7 &+ ($0 >> 12)) }
    }

    static func sha256(version: Int) -> String {
        SHA256.hash(data: content(version: version, 0..<size)).map { String(format: "%02x", $0) }.joined()
    }

    /// What one answer of a scripted origin looks like.
    struct Script: Sendable {
        /// The version served to request number `n` (from 0).
        var version: @Sendable (Int) -> Int
        /// The validator headers sent with request number `n`.
        var validators: @Sendable (Int) -> HTTPFields
    }

    /// Every request the scripted origin saw: its `Range`, `If-Range` and credentials.
    final class Log: Sendable {
        private let entries = Mutex<[HTTPFields]>([])
        func add(_ fields: HTTPFields) -> Int {
            entries.withLock {
                $0.append(fields)
                return $0.count - 1
            }
        }
        var all: [HTTPFields] { entries.withLock { $0 } }
    }

    /// An origin on 127.0.0.1 serving `/file` by `script`, with ranges (one range per request).
    static func withScriptedOrigin<T: Sendable>(
        _ script: Script, log: Log, _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        let router = Router()
        router.get("/file") { request, _ -> Response in
            let number = log.add(request.headers)
            let version = script.version(number)
            var headers = script.validators(number)
            headers[.contentType] = "application/octet-stream"
            headers[.acceptRanges] = "bytes"
            var range = 0..<size
            var status = HTTPResponse.Status.ok
            if let value = request.headers[.range], value.hasPrefix("bytes=") {
                let parts = value.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
                if parts.count == 2, let first = Int(parts[0]) {
                    let last = Int(parts[1]).map { min($0, size - 1) } ?? size - 1
                    range = first..<(last + 1)
                    status = .partialContent
                    headers[.contentRange] = "bytes \(first)-\(last)/\(size)"
                }
            }
            headers[.contentLength] = String(range.count)
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: content(version: version, range))))
        }
        return try await withRunningServer(router: router, body)
    }

    /// Downloads `url` into `directory` with 4 connections, as a job would.
    static func download(_ url: String, in directory: TemporaryDirectory, headers: [String: String] = [:]) async throws -> DownloadResult {
        let fetcher = Fetcher(stallTimeout: 5)
        let download = Download(
            url: url,
            target: DownloadTarget(partialPath: directory.path + "/job.part", destination: .directory(directory.path)),
            options: DownloadOptions(
                connections: 4, headers: headers, retry: EngineHarness.quickRetry, progressInterval: 0.05, minimumSplit: 256 << 10
            ),
            client: fetcher, checkpoints: JSONFileCheckpointStore(path: directory.path + "/job.checkpoint.json")
        )
        do {
            let result = try await download.run()
            try await fetcher.shutdown()
            return result
        } catch {
            try? await fetcher.shutdown()
            throw error
        }
    }

    @Test func contentThatChangesWithoutValidatorsIsNeverMixed() async throws {
        let log = Log()
        // Each request sees a newer version, and nothing tells the versions apart.
        let script = Script(version: { $0 }, validators: { _ in [:] })
        try await withTemporaryDirectory { directory in
            try await Self.withScriptedOrigin(script, log: log) { port in
                let result = try await Self.download("http://127.0.0.1:\(port)/file", in: directory)
                let versions = (0..<log.all.count).map(Self.sha256(version:))
                #expect(versions.contains(result.sha256), "the file is a mix of versions")
                // One connection: no second request was needed.
                #expect(log.all.count == 1)
            }
        }
    }

    @Test func aWeakETagWithAStrongDateResumesOnTheDate() async throws {
        let log = Log()
        let date = "Thu, 01 Jan 2026 00:00:00 GMT"
        let script = Script(
            version: { _ in 0 },
            validators: { _ in [.eTag: "W/\"weak-1\"", .lastModified: date, .date: "Thu, 01 Jan 2026 00:10:00 GMT"] }
        )
        try await withTemporaryDirectory { directory in
            try await Self.withScriptedOrigin(script, log: log) { port in
                let result = try await Self.download("http://127.0.0.1:\(port)/file", in: directory)
                #expect(result.sha256 == Self.sha256(version: 0))
                let segments = log.all.dropFirst()
                #expect(!segments.isEmpty, "the weak ETag alone made it a single stream")
                for fields in segments { #expect(fields[.ifRange] == date) }
            }
        }
    }

    @Test func anETagThatDisappearsIsAChange() async throws {
        let log = Log()
        // The probe has an ETag and version 0; every later answer has none, and version 1.
        let script = Script(
            version: { $0 == 0 ? 0 : 1 },
            validators: { $0 == 0 ? [.eTag: "\"v0\""] : [:] }
        )
        try await withTemporaryDirectory { directory in
            try await Self.withScriptedOrigin(script, log: log) { port in
                let result = try await Self.download("http://127.0.0.1:\(port)/file", in: directory)
                #expect(result.sha256 == Self.sha256(version: 1))
            }
        }
    }

    /// Downloads a file through a redirect from a "home" origin (the job URL's, with
    /// `userinfo` in it) to another: what the other origin's segment requests carried, and
    /// what the home origin was sent.
    static func downloadThroughRedirect(
        userinfo: String = "", headers: [String: String] = [:]
    ) async throws -> (segments: [HTTPFields], home: [(path: String, headers: HTTPFields, authority: String?)]) {
        let log = Log()
        let script = Script(version: { _ in 0 }, validators: { _ in [.eTag: "\"v0\""] })
        let home = FetcherTests.HeaderLog()
        try await withTemporaryDirectory { directory in
            try await Self.withScriptedOrigin(script, log: log) { originPort in
                try await FetcherTests.withRedirector(host: "127.0.0.1", log: home) { homePort in
                    let url = "http://\(userinfo)127.0.0.1:\(homePort)/to?url=http://127.0.0.1:\(originPort)/file"
                    let result = try await Self.download(url, in: directory, headers: headers)
                    #expect(result.sha256 == Self.sha256(version: 0))
                }
            }
        }
        #expect(log.all.count > 1, "no segment requests were made")
        #expect(!home.all.isEmpty)
        return (log.all, home.all)
    }

    @Test func credentialsStayWithTheJobsOriginForEverySegment() async throws {
        let credentials = ["Authorization": "Bearer secret", "Cookie": "session=1", "X-Other": "kept"]
        let (segments, home) = try await Self.downloadThroughRedirect(headers: credentials)
        for fields in segments {
            #expect(fields[.authorization] == nil)
            #expect(fields[.cookie] == nil)
            #expect(fields[HTTPField.Name("X-Other")!] == "kept")
        }
        #expect(home.allSatisfy { $0.headers[.authorization] == "Bearer secret" })
    }

    /// Issue 21: a URL's `user:password@` was not sent at all (curl sends it as `Basic`) and
    /// was logged as it was. It goes as `Basic`, decoded, to the URL's origin only: not to
    /// the origin a redirect leads to, not in the request's URL.
    @Test func credentialsInTheURLGoAsBasicToItsOriginOnly() async throws {
        let (segments, home) = try await Self.downloadThroughRedirect(userinfo: "user:p%40ss@")
        for fields in segments { #expect(fields[.authorization] == nil) }
        #expect(home.allSatisfy { $0.headers[.authorization] == "Basic dXNlcjpwQHNz" })
    }

    /// Issue 10: an announced length near Int64.max crashed the process (and again at every
    /// start); now no arithmetic on it traps, and the file is refused as too large.
    @Test(arguments: [Int64(1) << 62, Int64.max, Int64(5) << 40])
    func anAbsurdAnnouncedSizeIsRefused(size: Int64) async throws {
        let router = Router()
        router.get("/huge") { _, _ -> Response in
            Response(
                status: .partialContent,
                headers: [.contentRange: "bytes 0-\(size - 1)/\(size)", .eTag: "\"h\"", .contentType: "application/octet-stream"],
                body: .init(byteBuffer: ByteBuffer(bytes: [UInt8](repeating: 1, count: 1024)))
            )
        }
        try await withTemporaryDirectory { directory in
            try await withRunningServer(router: router) { port in
                await #expect(throws: SluiceError.self) {
                    _ = try await Self.download("http://127.0.0.1:\(port)/huge", in: directory)
                }
                do {
                    _ = try await Self.download("http://127.0.0.1:\(port)/huge", in: directory)
                } catch let error as SluiceError {
                    #expect(error.code == .fileTooLarge, "\(error)")
                }
            }
        }
    }

    /// Issue 10: a remote that trickles a byte every 29 s never tripped the 30 s stall rule
    /// and held a slot forever. On a clock 2,900 times faster than real time, a byte every
    /// 10 ms is a byte every 29 s: the connection is replaced, and the job fails.
    @Test func aTrickleIsAStallAndTheJobGivesUp() async throws {
        let requests = Mutex(0)
        let router = Router()
        router.get("/trickle") { _, _ -> Response in
            requests.withLock { $0 += 1 }
            return Response(
                status: .ok, headers: [.contentLength: "100000", .contentType: "application/octet-stream"],
                body: ResponseBody { writer in
                    for _ in 0..<100_000 {
                        try await writer.write(ByteBuffer(bytes: [0x2A]))
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    try await writer.finish(nil)
                }
            )
        }
        try await withTemporaryDirectory { directory in
            try await withRunningServer(router: router) { port in
                let clock = FastClock(speed: 2900)
                let fetcher = Fetcher(stallTimeout: 5)
                var options = DownloadOptions(connections: 4, retry: RetryPolicy(base: 1, maximum: 60, maximumFailures: 5))
                options.clock = ElapsedClock(clock)
                let download = Download(
                    url: "http://127.0.0.1:\(port)/trickle",
                    target: DownloadTarget(partialPath: directory.path + "/t.part", destination: .directory(directory.path)),
                    options: options, client: fetcher, checkpoints: JSONFileCheckpointStore(path: directory.path + "/t.json")
                )
                do {
                    _ = try await download.run()
                    Issue.record("a trickle completed")
                } catch let error as SluiceError {
                    #expect(error.code == .network)
                    #expect(error.message.contains("stalled"), "\(error)")
                }
                try await fetcher.shutdown()
                #expect(requests.withLock { $0 } == 5)
            }
        }
    }
}
