import DownloadEngine
import Testing

/// The per-host budget: first connections before extra ones, nothing held after a cancel.
struct HostConnectionsTests {
    @Test func extraConnectionsTakeOnlyWhatIsFree() {
        let cap = HostConnections(limit: 6)
        #expect(cap.tryAcquire("a:80", upTo: 4) == 4)
        #expect(cap.tryAcquire("a:80", upTo: 4) == 2)
        #expect(cap.tryAcquire("a:80", upTo: 1) == 0)
        // Another host has its own six.
        #expect(cap.tryAcquire("b:80", upTo: 8) == 6)
        #expect(cap.inUse == ["a:80": 6, "b:80": 6])
        for _ in 0..<6 { cap.release("b:80") }
        #expect(cap.inUse == ["a:80": 6])
    }

    @Test func aFreedConnectionGoesToADownloadWaitingForItsFirst() async throws {
        let cap = HostConnections(limit: 2)
        #expect(cap.tryAcquire("h:1", upTo: 2) == 2)
        let first = Task { try await cap.acquire("h:1") }
        try await waitUntil { cap.waiting.first == 1 }
        // Handed to the waiting download, not freed: nobody else can take it.
        cap.release("h:1")
        try await first.value
        #expect(cap.inUse == ["h:1": 2])
        #expect(cap.tryAcquire("h:1", upTo: 1) == 0)
        cap.release("h:1")
        #expect(cap.tryAcquire("h:1", upTo: 5) == 1)
    }

    @Test func aCancelledWaitHoldsNothing() async throws {
        let cap = HostConnections(limit: 1)
        try await cap.acquire("h:1")
        let waiting = Task { try await cap.acquire("h:1") }
        let more = Task { try await cap.waitForFreeSlot("h:1") }
        try await waitUntil { cap.waiting.first == 1 && cap.waiting.more == 1 }
        waiting.cancel()
        more.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await #expect(throws: CancellationError.self) { try await more.value }
        cap.release("h:1")
        #expect(cap.inUse.isEmpty)
        #expect(cap.waiting.first == 0 && cap.waiting.more == 0)
        #expect(cap.tryAcquire("h:1", upTo: 3) == 1)
    }

    @Test func thoseWantingMoreAreToldWhenOneFrees() async throws {
        let cap = HostConnections(limit: 1)
        try await cap.acquire("h:1")
        let told = Task { try await cap.waitForFreeSlot("h:1") }
        // Waiting, so that it is the release that tells it (not a free slot seen at once).
        try await waitUntil { cap.waiting.more == 1 }
        cap.release("h:1")
        try await told.value
        #expect(cap.tryAcquire("h:1", upTo: 2) == 1)
    }
}

private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition never held")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
