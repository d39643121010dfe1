@testable import JobService
import Foundation
import Synchronization
import SluiceTestSupport
import Testing

@Suite struct StoreThreadsTests {
    /// Calls that block (a stalled store) leave a thread for the next call: twenty held calls,
    /// and a twenty-first still runs at once.
    @Test func aBlockedCallNeverHoldsUpTheNext() async throws {
        let threads = StoreThreads(limit: 64, idleTimeout: 1)
        let release = Atomic(false)
        let started = Atomic(0)
        // The held calls go after 10 s whatever happens: with a fixed pool the 21st would wait
        // for them, and the test fails instead of hanging.
        let releasedByTheTimer = Atomic(false)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 10)
            releasedByTheTimer.store(true, ordering: .relaxed)
            release.store(true, ordering: .relaxed)
        }
        for _ in 0..<20 {
            threads.submit {
                started.add(1, ordering: .relaxed)
                while !release.load(ordering: .relaxed) { usleep(1000) }
            }
        }
        let ran = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            threads.submit { continuation.resume(returning: true) }
        }
        let early = !releasedByTheTimer.load(ordering: .relaxed)
        release.store(true, ordering: .relaxed)
        #expect(ran && early, "the 21st call waited for the 20 held ones")
        #expect(await waitUntil(.seconds(5)) { started.load(ordering: .relaxed) == 20 })
        // Idle threads go.
        #expect(await waitUntil(.seconds(10)) { threads.count == 0 })
    }
}
