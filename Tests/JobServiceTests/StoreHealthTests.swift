import Foundation
@testable import JobService
import SluiceTestSupport
import Testing

/// `/healthz`'s view of the store (`StoreHealth`): silence counts from a round trip that goes
/// unanswered, not from the last answer.
@Suite struct StoreHealthTests {
    /// A health loop that asks late (its task waiting for a thread on a loaded machine, here a
    /// sleep longer than the threshold) is not a store that does not answer. Before 65dfd02
    /// the silence counted from the last answer, and a healthy store was unavailable here.
    @Test func aLoopThatAsksLateIsNotAStoreThatDoesNotAnswer() async {
        let store = InMemoryJobRepository()
        let health = StoreHealth(repository: store, interval: .seconds(3), threshold: .milliseconds(300))
        let probe = Task { try await health.run() }
        defer { probe.cancel() }
        #expect(await waitUntil(.seconds(10), every: .milliseconds(5)) { store.calls["ping"] == 1 })
        // Between round trips, for three times the threshold: never unavailable.
        let wentAway = await waitUntil(.milliseconds(900), every: .milliseconds(10)) { !health.isAvailable }
        #expect(!wentAway)
        #expect(store.calls["ping"] == 1, "the loop asked again; the window saw no gap")
    }

    @Test func aRoundTripUnansweredPastTheThresholdIsUnavailableAndAnAnswerEndsIt() async {
        let store = InMemoryJobRepository()
        let health = StoreHealth(repository: store, interval: .milliseconds(50), threshold: .milliseconds(300))
        let probe = Task { try await health.run() }
        defer { probe.cancel() }
        #expect(await waitUntil(.seconds(10), every: .milliseconds(5)) { (store.calls["ping"] ?? 0) >= 1 })
        store.freeze()
        #expect(await waitUntil(.seconds(10), every: .milliseconds(10)) { !health.isAvailable })
        store.thaw()
        #expect(await waitUntil(.seconds(10), every: .milliseconds(10)) { health.isAvailable })
        store.fail(true)
        #expect(await waitUntil(.seconds(10), every: .milliseconds(10)) { !health.isAvailable })
        store.fail(false)
        #expect(await waitUntil(.seconds(10), every: .milliseconds(10)) { health.isAvailable })
    }
}
