import DownloadEngine
import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// The webhook loop's reads of the store (issue 21's review): a job event names the receivers
/// of what it stored, so the loop reads the backlog's receivers at its start only, not once
/// per event.
@Suite struct WebhookLoopReadsTests {
    @Test func eventsNameTheirReceiversAndCostNoReadOfTheBacklog() async throws {
        let store = InMemoryJobRepository()
        let client = Fetcher()
        // Nothing listens on the discard port: every attempt fails at once, and is retried
        // far later.
        let dispatcher = WebhookDispatcher(configuration: .init(url: "http://127.0.0.1:9/hook"), repository: store, client: client)
        let loop = Task { await dispatcher.run() }
        let started = await waitUntil(.seconds(10), every: .milliseconds(5)) { store.calls["deliveryReceivers"] == 1 }
        #expect(started)
        let ids = (0..<30).map { "job-\($0)" }
        for id in ids {
            let job = JobSnapshot(
                id: id, url: "http://origin.test/\(id)", state: .completed, connections: 1, priority: 0, createdAt: Date())
            await dispatcher.record(.completed, job: job)
        }
        let attempted = await waitUntil(.seconds(20), every: .milliseconds(10)) {
            var all = true
            for id in ids {
                let deliveries = (try? await store.deliveries(jobID: id)) ?? []
                all = all && deliveries.count == 1 && deliveries.allSatisfy { $0.attempts >= 1 }
            }
            return all
        }
        loop.cancel()
        await loop.value
        try await client.shutdown()
        #expect(attempted, "every event's delivery was tried")
        #expect(store.calls["deliveryReceivers"] == 1, "read \(store.calls["deliveryReceivers"] ?? 0) times")
    }
}
