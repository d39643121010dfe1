#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 20: a node whose PostgreSQL stops answering (every process frozen with SIGSTOP, as
/// a failover or a partition looks from the node) keeps answering reads from memory at
/// once, answers commands within their 2 s store budget (503 `store_unavailable`, nothing
/// changed), keeps its downloads running, and completes them with the right bytes once the
/// store is back. Before, reads waited behind the scheduler's store calls (24 s) and jobs
/// could fail for good with `store_unavailable`.
@Suite(
    .serialized, .enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct StoreStallTests {
    static func timed<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, (ContinuousClock.now - start) / .seconds(1))
    }

    @Test func aFrozenStoreNeitherFreezesTheAPINorFailsDownloads() async throws {
        let server = try TestPostgres.ownServer()
        defer { try? server.stop() }
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let node = try await ClusterNode(name: "stall", store: server.url(database: "sluice"), data: directory.path + "/node")
                // About 16 s each at 1.5 MB/s: running before, during and after the stall.
                let size: Int64 = 24_000_000
                var ids: [(id: String, seed: UInt64)] = []
                for seed: UInt64 in [31, 32, 33] {
                    ids.append((try await node.create("http://127.0.0.1:\(port)/testdata/\(size)?seed=\(seed)&rate=1500000"), seed))
                }
                #expect(
                    try await Cluster.waitUntil(.seconds(20)) {
                        var running = 0
                        for job in ids where try await node.job(job.id)["state"] as? String == "running" { running += 1 }
                        return running == 3
                    }
                )
                let frozen = try server.freeze()
                let stoppedAt = ContinuousClock.now
                var thawed = false
                defer { if !thawed { for pid in frozen { kill(pid, SIGCONT) } } }

                // Reads: from memory, at once, the whole time.
                var slowestRead = 0.0
                var reads = 0
                while ContinuousClock.now - stoppedAt < .seconds(4) {
                    let (job, seconds) = try await Self.timed { try await node.job(ids[0].id) }
                    #expect(job["state"] as? String == "running")
                    slowestRead = max(slowestRead, seconds)
                    reads += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
                let (list, listSeconds) = try await Self.timed { try await node.jobs() }
                #expect(list.count == 3)
                let (queue, queueSeconds) = try await Self.timed { try await node.json("GET", "/queue") }
                #expect(queue.status == 200)
                // Commands: answered within the store budget, refused, nothing changed.
                // Two commands at once: the second waits behind the first's store call, within
                // the same 2 s budget from its arrival (before, it got a budget of its own after).
                let pausing = ids[1].id
                async let pauseAnswer = Self.timed { try await node.json("POST", "/jobs/\(pausing)/pause") }
                let (created, createSeconds) = try await Self.timed {
                    try await node.json("POST", "/jobs", body: #"{"url":"http://127.0.0.1:\#(port)/testdata/1000?seed=1"}"#)
                }
                #expect(created.status == 503)
                let code = ((created.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? String
                #expect(code == "store_unavailable")
                let (paused, pauseSeconds) = try await pauseAnswer
                #expect(paused.status == 503)
                #expect(createSeconds < 3, "a create answered within 3 s of a frozen store, not \(createSeconds) s")
                #expect(pauseSeconds < 3, "a pause answered within 3 s of a frozen store, not \(pauseSeconds) s")
                // Under 1.5 s: what this guards against waited behind the store's calls (2 s
                // each, 24 s before). Two CI rehearsals under a whole heavy pass's load saw a read
                // at 1.14 s and 1.23 s on the node's debug build, past the 1 s bound it had.
                #expect(slowestRead < 1.5, "\(reads) reads, the slowest \(slowestRead) s")
                #expect(listSeconds < 1 && queueSeconds < 1)
                // Held for longer than a lease (3 s here) and past the health threshold.
                #expect(
                    try await Cluster.waitUntil(.seconds(15)) { try await node.json("GET", "/healthz").status == 503 },
                    "/healthz says degraded"
                )
                let (late, lateSeconds) = try await Self.timed { try await node.json("POST", "/jobs/\(ids[2].id)/pause") }
                #expect(late.status == 503)
                #expect(lateSeconds < 1, "refused at once once the store is known down")
                for pid in frozen { kill(pid, SIGCONT) }
                thawed = true

                // Every download completes, with the right bytes; none failed.
                #expect(
                    try await Cluster.waitUntil(.seconds(60)) {
                        for job in ids where try await node.job(job.id)["state"] as? String != "completed" { return false }
                        return true
                    }
                )
                for job in ids {
                    let state = try await node.job(job.id)
                    #expect(state["state"] as? String == "completed", "\(state)\n\(node.process.printedSoFar.stderr.suffix(6000))")
                }
                for job in ids {
                    #expect(try await node.job(job.id)["sha256"] as? String == Cluster.expected(size: size, seed: job.seed))
                }
                #expect(try await node.jobs().count == 3, "the refused create made nothing")
                await node.stop()
            }
        }
    }
}
