import DownloadEngine
import Testing

@Suite struct RateLimiterTests {
    /// A writer that reserved a slot far away under a slow rate used to sleep it out after
    /// the rate was lifted (hours, at 1 byte/s).
    @Test func aNewRateReachesWritersAlreadyWaiting() async throws {
        let limiter = RateLimiter(bytesPerSecond: 1)
        try await limiter.consume(1_000)  // the first bytes pass; the next wait 1,000 s
        // The writer must be through long before its old slot, whatever the load on the
        // machine (it takes a quarter of a second when idle).
        let liftedInTime = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await limiter.consume(1)
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return false
            }
            await Task.yield()
            limiter.setRate(nil)
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        #expect(liftedInTime)
    }

    @Test func aJobLimiterWaitsForItsParentToo() async throws {
        let clock = ContinuousClock()
        let parent = RateLimiter(bytesPerSecond: 1 << 20)
        let child = RateLimiter(bytesPerSecond: nil, parent: parent)
        #expect(child.effectiveBytesPerSecond == Double(1 << 20))
        child.setRate(1 << 30)
        #expect(child.effectiveBytesPerSecond == Double(1 << 20))
        let start = clock.now
        try await child.consume(1 << 19)  // passes: a tenth of a second is banked
        try await child.consume(1 << 19)  // the parent makes this wait about half a second
        #expect(clock.now - start >= .milliseconds(300))
    }
}
