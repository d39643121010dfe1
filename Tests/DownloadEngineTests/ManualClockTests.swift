import SluiceTestSupport
import Testing

/// The tests' manual clock keeps nothing for a wait that has ended.
@Suite struct ManualClockTests {
    /// A cancellation that came just after the clock ended the wait was kept forever, as if
    /// for a wait yet to come: one id per such race, for the life of the clock.
    @Test func aWaitCancelledAsItEndsLeavesNothingBehind() async throws {
        let clock = ManualClock()
        for _ in 0..<50 {
            let wait = Task { try await clock.sleep(for: .seconds(1)) }
            #expect(await waitUntil(.seconds(5), every: .milliseconds(1)) { clock.sleeping == 1 })
            // The wait is ended, and cancelled before its task has run on from there.
            clock.advance(by: .seconds(1))
            wait.cancel()
            _ = try? await wait.value
        }
        #expect(clock.keptCancellations == 0)
    }
}
