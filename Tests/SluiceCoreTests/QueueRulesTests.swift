import Foundation
import SluiceCore
import Testing

@Suite struct QueueRulesTests {
    @Test func dependenciesWaitFailAndReady() {
        let states: [String: JobState] = ["a": .completed, "b": .running, "c": .failed]
        let verdict = { (after: [String]) in JobDependencies.verdict(after: after, state: { states[$0] }) }
        #expect(verdict(["a"]) == .ready)
        #expect(verdict(["a", "b"]) == .waiting(["b"]))
        // A failed dependency is waited for (it can be retried); the scheduler fails the
        // jobs waiting for it when it fails. A gone one can never complete.
        #expect(verdict(["b", "c"]) == .waiting(["b", "c"]))
        #expect(verdict(["gone"]) == .failed("gone", reason: "dependency gone was deleted before it completed"))
    }

    @Test func aCycleIsFoundThroughOtherJobs() {
        let edges: [String: [String]] = ["b": ["a"], "c": ["b"]]
        // a waiting for c closes a → c → b → a.
        #expect(JobDependencies.makesCycle(id: "a", after: ["c"], dependencies: { edges[$0] ?? [] }))
        #expect(!JobDependencies.makesCycle(id: "d", after: ["c"], dependencies: { edges[$0] ?? [] }))
        #expect(JobDependencies.makesCycle(id: "a", after: ["a"], dependencies: { edges[$0] ?? [] }))
    }

    @Test func startsByPriorityThenAgeWithinFreeSlotsUnlessPaused() {
        let ready = [
            QueuePlan.Candidate(id: "old", priority: 0, sequence: 1),
            QueuePlan.Candidate(id: "young", priority: 0, sequence: 5),
            QueuePlan.Candidate(id: "urgent", priority: 9, sequence: 9),
        ]
        #expect(QueuePlan.starts(ready: ready, running: 1, settings: QueueSettings(maxActive: 3)) == ["urgent", "old"])
        #expect(QueuePlan.starts(ready: ready, running: 3, settings: QueueSettings(maxActive: 3)).isEmpty)
        #expect(QueuePlan.starts(ready: ready, running: 0, settings: QueueSettings(paused: true, maxActive: 3)).isEmpty)
    }

    @Test func lowestPriorityThenYoungestAreSentBack() {
        let running = [
            QueuePlan.Candidate(id: "old", priority: 0, sequence: 1),
            QueuePlan.Candidate(id: "young", priority: 0, sequence: 5),
            QueuePlan.Candidate(id: "urgent", priority: 9, sequence: 9),
        ]
        #expect(QueuePlan.preemptions(running: running, settings: QueueSettings(maxActive: 1)) == ["young", "old"])
        #expect(QueuePlan.preemptions(running: running, settings: QueueSettings(maxActive: 3)).isEmpty)
    }

    @Test func queuePatchValidatesEveryField() throws {
        func patch(_ json: String) throws -> QueueSettingsPatch { try JSONDecoder().decode(QueueSettingsPatch.self, from: Data(json.utf8)) }
        func field(_ json: String) -> String? {
            do {
                _ = try patch(json)
                return nil
            } catch let error as SluiceError { return error.field } catch { return "?" }
        }
        #expect(field(#"{"maxActive":0}"#) == "maxActive")
        #expect(field(#"{"maxActive":65}"#) == "maxActive")
        #expect(field(#"{"limitRate":-1}"#) == "limitRate")
        #expect(field(#"{"paused":"yes"}"#) == "paused")
        #expect(field(#"{"speed":1}"#) == "speed")
        let settings = QueueSettings(maxActive: 3, limitRate: 100)
        #expect(try patch(#"{"limitRate":null}"#).applied(to: settings).limitRate == nil)
        #expect(
            try patch(#"{"maxActive":64,"paused":true}"#).applied(to: settings)
                == QueueSettings(paused: true, maxActive: 64, limitRate: 100))
    }

    @Test func jobPatchValidatesEveryFieldAndTellsNullFromAbsent() throws {
        func patch(_ json: String) throws -> JobPatch { try JSONDecoder().decode(JobPatch.self, from: Data(json.utf8)) }
        func failure(_ json: String) -> (String, String?)? {
            do {
                _ = try patch(json)
                return nil
            } catch let error as SluiceError { return (error.code.rawValue, error.field) } catch { return ("?", nil) }
        }
        #expect(failure(#"{"state":"running"}"#)! == ("invalid_field", "state"))
        #expect(failure(#"{"connections":17}"#)! == ("invalid_field", "connections"))
        #expect(failure(#"{"limitRate":0}"#)! == ("invalid_field", "limitRate"))
        #expect(failure(#"{"url":"ftp://x/y"}"#)!.0 == "unsupported_scheme")
        #expect(failure(#"{"filename":"../x"}"#)! == ("invalid_filename", "filename"))
        #expect(failure(#"{"after":["a","a"]}"#)! == ("invalid_field", "after"))
        #expect(failure(#"{"headers":{"Range":"bytes=0-"}}"#)! == ("invalid_field", "headers"))
        #expect(try patch(#"{"limitRate":null}"#).limitRate == .removed)
        #expect(try patch(#"{"priority":5}"#).limitRate == nil)
        #expect(try patch(#"{"priority":5}"#).changesTheDownload == false)
        #expect(try patch(#"{"connections":2}"#).changesTheDownload)
    }

    @Test func storedSegmentsCoverTheFileWithGaps() {
        let segments = JobSegment.stored(written: [10..<20, 0..<5], total: 30)
        #expect(segments.map { [$0.start, $0.end, $0.done] } == [[0, 5, 5], [5, 10, 0], [10, 20, 10], [20, 30, 0]])
    }

    @Test func dependencyFailureAndSendingBackAreLifecycleEvents() {
        var queued = JobLifecycle(state: .queued)
        #expect(queued.dependencyFailed() == .none)
        #expect(queued.state == .failed)
        var paused = JobLifecycle(state: .paused)
        _ = paused.dependencyFailed()
        #expect(paused.state == .paused)
        var running = JobLifecycle(state: .running)
        #expect(running.sentBack() == .stopDownload)
        #expect(running.state == .queued)
    }
}

@Suite struct QueueInputEdgeTests {
    /// Found by schemathesis: ids of up to 64 code points that take more UTF-8 bytes, and
    /// ids that differ only by canonical equivalence, are valid JSON Schema and were refused.
    @Test func afterCountsAndComparesCodePoints() throws {
        let long = String(repeating: "é", count: 64)
        #expect(throws: Never.self) { try CreateJobRequest.validateAfter([long]) }
        #expect(throws: Never.self) { try CreateJobRequest.validateAfter(["\u{00C8}", "E\u{0300}"]) }
        #expect(throws: SluiceError.self) { try CreateJobRequest.validateAfter([String(repeating: "a", count: 65)]) }
        #expect(throws: SluiceError.self) { try CreateJobRequest.validateAfter(["a", "a"]) }
    }

    /// Found by schemathesis: `?state=,failed` worked before bulk actions shared the parser.
    @Test func emptyStateItemsAreSkipped() throws {
        #expect(try JobSelection.states(parsing: ",failed,running") == [.failed, .running])
        #expect(throws: SluiceError.self) { try JobSelection.states(parsing: "failed,sleeping") }
    }
}
