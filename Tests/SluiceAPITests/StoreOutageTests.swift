#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 20: `/healthz` tells the truth about the store, answered at once from what the
/// service last saw: 503 `degraded` within 15 s of PostgreSQL stopping to answer (frozen with
/// SIGSTOP, as a failover or a partition looks from the node), 200 again once it answers.
@Suite(
    .serialized, .enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct StoreOutageTests {
    static func health(port: Int) async throws -> (status: Int, body: String, seconds: Double) {
        let start = ContinuousClock.now
        let reply = try await RawHTTPClient.request(port: port, path: "/healthz")
        return (reply.status, String(decoding: reply.body, as: UTF8.self), (ContinuousClock.now - start) / .seconds(1))
    }

    /// The service runs as a process of its own: while the store is frozen its threads wait
    /// on it, and this test process's (shared by every other test) must not.
    @Test func healthzSaysDegradedWhileTheStoreIsFrozenAndOkOnceItAnswers() async throws {
        let server = try TestPostgres.ownServer()
        defer { try? server.stop() }
        try await withTemporaryDirectory { directory in
            let node = try ChildProcess(
                arguments: ["serve", "--port", "0", "--data", directory.path + "/data", "--store", server.url(database: "sluice")]
            )
            defer {
                node.signal(SIGKILL)
            }
            let line = try await node.waitForLine(containing: "listening on http://127.0.0.1:")
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
            #expect(try await Self.health(port: port).body == #"{"status":"ok"}"#)
            let frozen = try server.freeze()
            #expect(frozen.count > 1)
            defer { for pid in frozen { kill(pid, SIGCONT) } }
            let stoppedAt = ContinuousClock.now
            var last = try await Self.health(port: port)
            var slowest = last.seconds
            while last.status == 200, ContinuousClock.now - stoppedAt < .seconds(20) {
                try await Task.sleep(for: .milliseconds(200))
                last = try await Self.health(port: port)
                slowest = max(slowest, last.seconds)
            }
            #expect(last.status == 503)
            #expect(last.body == #"{"status":"degraded","store":"unavailable"}"#)
            // A job the node does not hold only the store could tell of: 503 at once, never a
            // wait on the stalled store (nor a 404 it cannot know).
            let asked = ContinuousClock.now
            let unheld = try await RawHTTPClient.request(port: port, path: "/jobs/zzzzzzzzzzzzz")
            #expect(unheld.status == 503)
            #expect(String(decoding: unheld.body, as: UTF8.self).contains("store_unavailable"))
            #expect(ContinuousClock.now - asked < .seconds(2), "refused at once")
            #expect(ContinuousClock.now - stoppedAt < .seconds(15), "degraded within 15 s of the stall")
            // A store call would take the store's 10 s timeout or hang; under CI's load a
            // request of this busy test process has been seen to take up to 3 s by itself.
            #expect(slowest < 5, "answered at once, never after a store call")
            for pid in frozen { kill(pid, SIGCONT) }
            let resumedAt = ContinuousClock.now
            while last.status != 200, ContinuousClock.now - resumedAt < .seconds(30) {
                try await Task.sleep(for: .milliseconds(200))
                last = try await Self.health(port: port)
            }
            #expect(last.status == 200, "ok again once the store answers")
        }
    }
}
