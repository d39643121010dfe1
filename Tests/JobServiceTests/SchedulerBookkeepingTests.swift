import DownloadEngine
import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// What the scheduler keeps per job beside the job table goes when the job's run does: a
/// node that has run 200,000 jobs holds nothing for the finished ones.
@Suite struct SchedulerBookkeepingTests {
    /// Before: every job that ran kept its rate limiter until it was deleted, and a single
    /// node recorded every create and delete for a change feed only a cluster reads.
    @Test func finishedJobsLeaveNoRuntimeBehind() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let store = InMemoryJobRepository()
                try await JobServiceTests.withScheduler(directory, store: store) { scheduler in
                    var ids: [String] = []
                    for index in 0..<5 {
                        ids.append(
                            try await scheduler.create(try JobServiceTests.request("http://127.0.0.1:\(port)/testdata/64K?seed=\(index)"))
                                .job.id
                        )
                    }
                    #expect(
                        try await waitUntil(.seconds(20), every: .milliseconds(20)) {
                            for id in ids where try await scheduler.jobInPlace(id: id)?.state != .completed { return false }
                            return true
                        }
                    )
                    // Finished, they leave the table for the store once their state is stored
                    // (behind the scheduler), and the store answers for them.
                    #expect(await waitUntil(.seconds(10)) { ids.allSatisfy { scheduler.jobs[$0] == nil } })
                    #expect(try await scheduler.job(id: ids[0])?.state == .completed)
                    #expect(scheduler.countsByState()[.completed] == ids.count)
                    try await scheduler.delete(id: ids[0], deleteFile: true)
                    #expect(await scheduler.book.controlWrites.isEmpty, "a single node records control writes")
                    // No run, limiter, retry count or progress clock kept for a finished job.
                    #expect(await scheduler.hasNoRuns, "a finished job's runtime stays")
                }
            }
        }
    }
}
