import DownloadEngine
import Foundation
import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 20, point 5: a pause answers once the run has stopped and its checkpoint is
/// stored, so the `bytesDone` it returns is final and an edit right after it sees those
/// bytes. On the real engine: the checkpoint is the run's.
@Suite struct PauseFinalityTests {
    @Test func aNewLinkRightAfterAPauseKeepsTheBytesOrIsRefused() async throws {
        try await RunnerOnTheOrigin.with { runner in
            // Several rounds: the race lost about one time in two before the fix.
            for round in 0..<4 {
                let seed = 40 + round
                let url = runner.testdata("/testdata/32M?seed=\(seed)&rate=4M")
                let id = try await runner.create(["url": url, "connections": 2])
                try await runner.waitFor(id) { $0.bytesDone >= 2 << 20 }
                // The pause and the edit go out together: the edit must not run before the
                // pause's checkpoint is stored.
                async let paused = runner.scheduler.pause(id: id)
                async let edited = runner.refusal {
                    try await runner.edit(id, ["url": runner.testdata("/testdata/32M?seed=\(seed + 100)"), "keepBytes": true])
                }
                let (pause, edit) = try await (paused, edited)
                #expect(pause.state == .paused)
                #expect(edit == "remote_changed", "round \(round)")
                let job = try #require(try await runner.scheduler.job(id: id))
                #expect(job.url == url, "round \(round)")
                #expect(job.state == .paused)
                #expect(job.bytesDone >= 2 << 20, "round \(round): the bytes on disk stay")
                try await runner.scheduler.delete(id: id, deleteFile: false)
            }
        }
    }

    @Test func thePausesAnswerIsFinal() async throws {
        try await RunnerOnTheOrigin.with { runner in
            let id = try await runner.create(["url": runner.testdata("/testdata/32M?seed=3&rate=8M"), "connections": 4])
            try await runner.waitFor(id) { $0.bytesDone >= 1 << 20 }
            let answered = try await runner.scheduler.pause(id: id).bytesDone
            // Whatever the run had in flight when it stopped is in that figure already: it is
            // the stored checkpoint's (what a resume goes on from), and the job shows it.
            let stored = try await runner.scheduler.segments(id: id).reduce(0) { $0 + $1.done }
            #expect(stored == answered, "the checkpoint holds \(stored), the pause answered \(answered)")
            #expect(try await runner.scheduler.job(id: id)?.bytesDone == answered)
            // And a resume goes on from exactly there.
            _ = try await runner.scheduler.resume(id: id)
            let done = try await runner.waitFor(id) { !$0.state.isLive }
            #expect(done.state == .completed)
            #expect(runner.holdsTestData(done, size: 32 << 20, seed: 3))
        }
    }
}
