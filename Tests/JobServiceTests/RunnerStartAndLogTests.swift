import DownloadEngine
import Foundation
import Logging
@testable import JobService
import SluiceCore
import Testing

/// What the runner reads at its start (`StoredStart`) and what its log says of a run's end
/// (`RunEndLog`): values taken out of the runner, tested as such.
@Suite struct RunnerStartAndLogTests {
    static func job(_ id: String, _ state: JobState, after: [String] = []) -> JobSnapshot {
        var job = JobSnapshot(id: id, url: "http://127.0.0.1:9/\(id)", state: state, connections: 1, priority: 0, createdAt: Date())
        job.after = after
        job.speed = state == .running ? 100 : 0
        return job
    }

    @Test func theStartHoldsLiveJobsCountsFinishedOnesAndKeepsTheStatesLiveOnesWaitFor() async throws {
        let repository = InMemoryJobRepository()
        try await repository.insert([
            Self.job("done", .completed), Self.job("gone", .failed), Self.job("running", .running, after: ["done"]),
            Self.job("queued", .queued), Self.job("paused", .paused),
        ])
        var start = try await StoredStart.read(repository, cluster: nil)
        #expect(Set(start.live.map(\.id)) == ["running", "queued", "paused"])
        #expect(start.finishedCounts[.completed] == 1 && start.finishedCounts[.failed] == 1)
        #expect(start.finishedCounts[.running] == nil && start.finishedCounts[.queued] == nil)
        #expect(start.finishedDependencies == ["done": .completed])
        #expect(start.recovered == 0)
        // A single node's start sends what was running back to the queue, to be stored.
        #expect(start.requeueRunning() == ["running"])
        let requeued = try #require(start.live.first { $0.id == "running" })
        #expect(requeued.state == .queued && requeued.speed == 0)
        #expect(start.live.first { $0.id == "paused" }?.state == .paused)
    }

    @Test func theLogSaysARunsEndInWordsAndNothingOfAStop() {
        let running = Self.job("j", .running)
        let failure = SluiceError(.notFound, "the remote answered 404")
        let failed = JobSnapshot.JobError(code: "http_error", message: "the remote answered 404")
        let cases: [(RunEnd.Outcome, JobScheduler.Outcome, Logger.Level?, String?)] = [
            (.stopped, .failure(CancellationError()), nil, nil),
            (.failed(failed), .failure(failure), .warning, "job j failed: the remote answered 404 (http_error)"),
            (
                .storeUnavailable, .failure(failure), .warning,
                "job j goes back to the queue until its store answers: the remote answered 404"
            ),
        ]
        for (ended, outcome, level, line) in cases {
            let said = RunEndLog.line(for: running, ended, outcome)
            #expect(said?.0 == level)
            #expect(said?.1 == line)
        }
        // A job finished already (another run or node recorded it): this run's end changes nothing.
        let said = RunEndLog.line(for: Self.job("j", .completed), .failed(failed), .failure(failure))
        #expect(said?.1 == "job j is completed already; this run's end, its failure (the remote answered 404), changes nothing")
        #expect(RunEndLog.said(CancellationError()) == "stopped")
    }
}
