#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import Foundation
import NIOCore
import SluiceTestSupport
import Testing
import NIOHTTP1

@Suite struct RecoveryTests {
    /// A restart after a graceful stop resumes running jobs from their checkpoints and
    /// keeps paused ones paused.
    @Test func gracefulRestartResumesRunningJobs() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path, recorder: recorder) { port in
                let data = directory.path + "/data"
                let url = "http://127.0.0.1:\(port)/testdata/16M?rate=4M&seed=9"
                let (running, paused) = try await firstRun(data: data, url: url)
                let servedBefore = recorder.bytesSent()
                try await ServiceHarness.with(dataDirectory: data) { (service: ServiceHarness) async throws in
                    #expect(try await service.job(paused)["state"] as? String == "paused")
                    let done = try await service.waitFor(running) { $0["state"] as? String == "completed" }
                    #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 16 << 20, seed: 9))
                }
                // The second run fetched less than the whole file again.
                #expect(recorder.bytesSent() - servedBefore < 16 << 20)
            }
        }
    }

    private func firstRun(data: String, url: String) async throws -> (running: String, paused: String) {
        let ids = SendableBox<(String, String)>()
        try await ServiceHarness.with(dataDirectory: data) { (service: ServiceHarness) async throws in
            let running = try await service.create(["url": url, "connections": 2])["id"] as! String
            let paused = try await service.create(["url": url, "paused": true])["id"] as! String
            try await service.waitFor(running) { ($0["bytesDone"] as? Int ?? 0) >= 2 << 20 }
            ids.value = (running, paused)
        }
        return try #require(ids.value)
    }

    /// `kill -9` of the real binary mid-download: the next start resumes from the
    /// checkpoint instead of fetching the file again.
    @Test func kill9ThenRestartCompletesWithoutRefetchingMuch() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path, recorder: recorder) { port in
                let data = directory.path + "/data"
                let size: Int64 = 24 << 20
                // 2 MiB/s over the 4 connections: checkpoints (every 2 s, each after an
                // fsync that a loaded machine can make slow) land well before the crash.
                let url = "http://127.0.0.1:\(port)/testdata/24M?rate=512K&seed=11"
                let client = HTTPClient.shared

                let first = try ChildProcess(arguments: ["serve", "--port", "0", "--data", data])
                let base = try await Self.listeningURL(first)
                let id = try await Self.createJob(client, base: base, url: url)
                // Wait past a checkpoint (every 2 s) with bytes on disk, then crash.
                let deadline = ContinuousClock.now + .seconds(30)
                var done = 0
                while ContinuousClock.now < deadline, done < 10 << 20 {
                    done = try await Self.job(client, base: base, id: id)["bytesDone"] as? Int ?? 0
                    try await Task.sleep(for: .milliseconds(100))
                }
                first.signal(SIGKILL)
                _ = try await first.finish()
                // Requests of the first run still count their bytes as the origin notices
                // the dead connections: the second run's are the ones that begin after this.
                let firstRunRequests = recorder.all.count

                let second = try ChildProcess(arguments: ["serve", "--port", "0", "--data", data])
                let base2 = try await Self.listeningURL(second)
                var job: [String: Any] = [:]
                let deadline2 = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline2 {
                    job = try await Self.job(client, base: base2, id: id)
                    if job["state"] as? String == "completed" || job["state"] as? String == "failed" { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                second.signal(SIGTERM)
                let (status, _, _) = try await second.finish(timeout: .seconds(5))
                #expect(status == 0)
                #expect(job["state"] as? String == "completed")
                #expect(job["sha256"] as? String == ServiceHarness.expectedSHA256(size: size, seed: 11))
                // The second run resumed: it fetched at most what the first had not
                // checkpointed. (Not "bytes sent twice": under load the first run's data plane,
                // at a lower priority, reads late while the origin fills the socket buffers,
                // and those bytes count as sent; that failed at 17.7 and 19.2 of 16 MiB.)
                let secondRun = recorder.all.dropFirst(firstRunRequests).reduce(0) { $0 + $1.bodyBytes }
                #expect(secondRun <= size - (4 << 20), "the second run fetched \(secondRun) of \(size) bytes")
            }
        }
    }

    static func listeningURL(_ process: ChildProcess) async throws -> String {
        let line = try await process.waitForLine(containing: "listening on ")
        return String(line[line.range(of: "http://")!.lowerBound...]).trimmingCharacters(in: .whitespaces)
    }

    static func createJob(_ client: HTTPClient, base: String, url: String) async throws -> String {
        var request = HTTPClientRequest(url: base + "/jobs")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"url":"\#(url)","connections":2}"#))
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as! [String: Any]
        return json["id"] as! String
    }

    static func job(_ client: HTTPClient, base: String, id: String) async throws -> [String: Any] {
        let response = try await client.execute(HTTPClientRequest(url: base + "/jobs/" + id), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as! [String: Any]
    }
}

/// A value a `@Sendable` closure can hand back.
final class SendableBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    var value: T? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
