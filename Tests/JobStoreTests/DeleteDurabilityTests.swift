#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JobStore
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 20: a job whose removal was told (its `removed` webhook delivery stored) never comes
/// back after a `kill -9`. The delivery and the removal are one transaction now; before, the
/// delivery was stored first and the job deleted by a second write, and a crash between the
/// two brought the job back at the next start.
@Suite(.serialized)
struct DeleteDurabilityTests {
    @Test func aKill9DuringABulkDeleteNeverBringsBackAnAnnouncedJob() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            var checkedMidway = 0
            for attempt in 0..<3 {
                // Deliveries to a port nothing listens on stay pending: they are what the
                // store says was told.
                let node = try ChildProcess(arguments: [
                    "serve", "--port", "0", "--data", data, "--webhook", "http://127.0.0.1:9/hook",
                ])
                let line = try await node.waitForLine(containing: "listening on http://127.0.0.1:")
                let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
                var created: Set<String> = []
                for index in 0..<300 {
                    let reply = try await RawHTTPClient.request(
                        port: port, method: "POST", path: "/jobs", headers: ["Content-Type": "application/json"],
                        body: #"{"url":"http://127.0.0.1:9/\#(attempt)-\#(index)","paused":true}"#
                    )
                    #expect(reply.status == 201)
                    let json = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any]
                    created.insert(try #require(json?["id"] as? String))
                }
                // The bulk delete runs; it is killed as soon as the node shows it under way
                // (fewer paused jobs than were made), in the middle of its 300 removals.
                let deleting = Task {
                    try? await RawHTTPClient.request(port: port, method: "DELETE", path: "/jobs?state=paused")
                }
                let underWay = await waitUntil(.seconds(30), every: .milliseconds(1)) {
                    guard let reply = try? await RawHTTPClient.request(port: port, method: "GET", path: "/queue"),
                        let queue = try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any],
                        let paused = (queue["counts"] as? [String: Any])?["paused"] as? Int
                    else { return false }
                    return paused < created.count
                }
                #expect(underWay)
                node.signal(SIGKILL)
                _ = try? await node.finish(timeout: .seconds(10))
                _ = await deleting.value

                let repository = try SQLiteJobRepository(path: data + "/sluice.sqlite")
                let left = Set(try await repository.allJobs().map(\.id))
                let announced = try await repository.pendingDeliveries().filter { $0.event == .removed && created.contains($0.jobID) }
                    .map(\.jobID)
                let back = announced.filter(left.contains)
                #expect(back.isEmpty, "announced removed, yet back after the crash: \(back.count) job(s)")
                if !left.isEmpty && !announced.isEmpty { checkedMidway += 1 }
                // The next attempt starts clean.
                for id in left { try await repository.delete(id: id) }
            }
            // At least one crash landed in the middle of the delete (else nothing was shown).
            #expect(checkedMidway > 0)
        }
    }
}
