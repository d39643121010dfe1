import Testing

@testable import JobService

/// A webhook receiver's queue ends only when nothing was stored for it since it last looked,
/// whoever took the signal that told it so.
@Suite struct ReceiverQueuesTests {
    /// The stop-30 CI failure: a queue's own sleep took the signal of a delivery stored after
    /// its last look, and the queue then ended, leaving that delivery without a queue.
    @Test func aQueueJoinedAfterItsLastLookDoesNotEnd() async {
        let queues = ReceiverQueues()
        let wake = try! #require(queues.join("http://127.0.0.1:1"))
        let looked = queues.look("http://127.0.0.1:1")
        // A delivery is stored; the dispatcher finds the queue running and wakes it.
        #expect(queues.join("http://127.0.0.1:1") == nil)
        // The queue's outstanding sleep takes that signal.
        await wake.wait(upTo: .seconds(60), sleep: { try await Task.sleep(for: $0) })
        #expect(!queues.leave("http://127.0.0.1:1", lookedAt: looked))
        // It looks again, finds nothing, and now ends; the next delivery starts a new queue.
        #expect(queues.leave("http://127.0.0.1:1", lookedAt: queues.look("http://127.0.0.1:1")))
        #expect(queues.join("http://127.0.0.1:1") != nil)
    }

    @Test func eachReceiverHasItsOwnQueue() {
        let queues = ReceiverQueues()
        #expect(queues.join("http://a") != nil)
        #expect(queues.join("http://b") != nil)
        #expect(queues.join("http://a") == nil)
        #expect(queues.leave("http://b", lookedAt: queues.look("http://b")))
        #expect(!queues.leave("http://a", lookedAt: 0))
    }
}
