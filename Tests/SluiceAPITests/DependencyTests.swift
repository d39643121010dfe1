import Foundation
import SluiceTestSupport
import Testing

/// `after`: jobs that start only when the jobs they wait for have completed.
@Suite struct DependencyTests {
    @Test func aChainCompletesInOrderWithTheRightBytes() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            // Every state change, in the order the service made them.
            var events = try await service.events()
            let a = try await service.create(["url": service.testdata("/testdata/2M?seed=1&rate=8M")])["id"] as! String
            let b = try await service.create(["url": service.testdata("/testdata/1M?seed=2"), "after": [a]])
            #expect(b["state"] as? String == "queued")
            #expect(b["waitingFor"] as? [String] == [a])
            #expect(b["after"] as? [String] == [a])
            let bID = b["id"] as! String
            let c = try await service.create(["url": service.testdata("/testdata/1M?seed=3"), "after": [bID]])["id"] as! String
            let done = try await service.waitFor(c) { $0["state"] as? String == "completed" }
            let first = try await service.job(a)
            let second = try await service.job(bID)
            #expect(second["waitingFor"] as? [String] == [])
            let times = [first, second, done].map { $0["completedAt"] as! String }
            #expect(times == times.sorted())
            // Each started only after the one before completed (completedAt has whole
            // seconds, so the stream's order is what tells).
            var changes: [String] = []
            while changes.last != "\(c) completed" {
                let (event, data) = try await events.until { event, _ in event == "job" }
                guard event == "job", let id = data["id"] as? String, let state = data["state"] as? String else { continue }
                let change = "\(id) \(state)"
                if changes.last(where: { $0.hasPrefix(id) }) != change { changes.append(change) }
            }
            func position(_ change: String) -> Int { changes.firstIndex(of: change) ?? -1 }
            #expect(position("\(a) completed") >= 0)
            #expect(position("\(a) completed") < position("\(bID) running"), "\(changes)")
            #expect(position("\(bID) completed") < position("\(c) running"), "\(changes)")
            #expect(first["sha256"] as? String == ServiceHarness.expectedSHA256(size: 2 << 20, seed: 1))
            #expect(second["sha256"] as? String == ServiceHarness.expectedSHA256(size: 1 << 20, seed: 2))
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 1 << 20, seed: 3))
        }
    }

    @Test func aFailedDependencyFailsTheJobAndAResumeWaitsAgain() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            // A fails once (404, final), then serves the file.
            let a = try await service.create(["url": service.testdata("/testdata/1M?status=404&times=1"), "paused": true])["id"] as! String
            let b = try await service.create(["url": service.testdata("/testdata/1M?seed=9"), "after": [a]])["id"] as! String
            #expect(try await service.request(.post, "/jobs/\(a)/resume").status == 200)
            try await service.waitFor(a) { $0["state"] as? String == "failed" }
            let failed = try await service.waitFor(b) { $0["state"] as? String == "failed" }
            let error = failed["error"] as? [String: Any]
            #expect(error?["code"] as? String == "dependency_failed")
            #expect((error?["message"] as? String)?.contains(a) == true)
            // Retry A, then resume B: it waits for A again, then completes.
            #expect(try await service.request(.post, "/jobs/\(a)/resume").status == 200)
            let resumed = try await service.request(.post, "/jobs/\(b)/resume").json()
            #expect(resumed["state"] as? String != "failed")
            let done = try await service.waitFor(b) { $0["state"] as? String == "completed" }
            #expect(done["error"] is NSNull)
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 1 << 20, seed: 9))
        }
    }

    /// docs/api.md, "Routes": a resume answers `queued` or `running`. Resuming a job whose
    /// dependency is still failed used to fail it again at once (and answer `failed`); it
    /// waits now.
    @Test func aJobResumedBeforeItsFailedDependencyWaitsForIt() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let a =
                try await service.create(["url": service.testdata("/testdata/1M?status=404&times=1&seed=5"), "paused": true])["id"]
                as! String
            let b = try await service.create(["url": service.testdata("/testdata/1M?seed=6"), "after": [a]])["id"] as! String
            let c = try await service.create(["url": service.testdata("/testdata/1M?seed=7"), "after": [b]])["id"] as! String
            #expect(try await service.request(.post, "/jobs/\(a)/resume").status == 200)
            // A fails; B and C, down the chain, with it.
            let failed = try await service.waitFor(c) { $0["state"] as? String == "failed" }
            #expect((failed["error"] as? [String: Any])?["message"] as? String == "dependency \(b) failed")
            let resumed = try await service.request(.post, "/jobs/\(b)/resume")
            #expect(resumed.status == 200)
            #expect(try resumed.json()["state"] as? String == "queued")
            #expect(try resumed.json()["waitingFor"] as? [String] == [a])
            #expect(try await service.request(.post, "/jobs/\(a)/resume").status == 200)
            let done = try await service.waitFor(b) { $0["state"] as? String == "completed" }
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 1 << 20, seed: 6))
            // C was not resumed: it stays failed.
            #expect(try await service.job(c)["state"] as? String == "failed")
        }
    }

    /// A resumed job whose dependency was deleted has nothing left to wait for.
    @Test func aJobResumedAfterItsDependencyWasDeletedRuns() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let a = try await service.create(["url": service.testdata("/testdata/1M"), "paused": true])["id"] as! String
            let b = try await service.create(["url": service.testdata("/testdata/1M?seed=8"), "after": [a]])["id"] as! String
            #expect(try await service.request(.delete, "/jobs/\(a)").status == 204)
            try await service.waitFor(b) { $0["state"] as? String == "failed" }
            let reply = try await service.request(.post, "/jobs/\(b)/resume")
            #expect(reply.status == 200, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            let resumed = try reply.json()
            // In process a 1 MiB run may complete before the answer is read.
            #expect(["queued", "running", "completed"].contains(resumed["state"] as? String), "\(resumed)")
            #expect(resumed["after"] as? [String] == [])
            try await service.waitFor(b) { $0["state"] as? String == "completed" }
        }
    }

    @Test func aDeletedDependencyFailsTheJobWaitingForIt() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let a = try await service.create(["url": service.testdata("/testdata/1M"), "paused": true])["id"] as! String
            let b = try await service.create(["url": service.testdata("/testdata/1M"), "after": [a]])["id"] as! String
            #expect(try await service.request(.delete, "/jobs/\(a)").status == 204)
            let failed = try await service.waitFor(b) { $0["state"] as? String == "failed" }
            #expect((failed["error"] as? [String: Any])?["code"] as? String == "dependency_failed")
        }
    }

    @Test func unknownSelfAndCyclicDependenciesAreRefusedAndChangeNothing() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let a = try await service.create(["url": service.testdata("/testdata/1M"), "paused": true])["id"] as! String
            let b = try await service.create(["url": service.testdata("/testdata/1M"), "paused": true, "after": [a]])["id"] as! String
            let before = try await service.states()

            let unknown = try await service.send(.post, "/jobs", ["url": service.testdata("/testdata/1M"), "after": ["nope"]])
            #expect(unknown.status == 400)
            #expect(unknown.errorCode == "invalid_field")
            #expect(unknown.errorField == "after")

            let selfWait = try await service.send(.patch, "/jobs/\(a)", ["after": [a]])
            #expect(selfWait.status == 400)
            #expect(selfWait.errorField == "after")

            let cycle = try await service.send(.patch, "/jobs/\(a)", ["after": [b]])
            #expect(cycle.status == 409)
            #expect(cycle.errorCode == "dependency_cycle")

            let unknownEdit = try await service.send(.patch, "/jobs/\(a)", ["after": ["nope"]])
            #expect(unknownEdit.status == 400)
            #expect(try await service.states() == before)
            #expect(try await service.job(a)["after"] as? [String] == [])
        }
    }
}
