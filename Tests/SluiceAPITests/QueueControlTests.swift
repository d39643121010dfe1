import Foundation
import SluiceTestSupport
import Testing

/// `GET`/`PATCH /queue`: a queue that can be paused, whose concurrency and rate change while
/// it runs, and whose settings survive a restart.
@Suite struct QueueControlTests {
    @Test func aPausedQueueStartsNothingWhileRunningJobsFinish() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let running = try await service.create(["url": service.testdata("/testdata/4M?rate=8M")])["id"] as! String
            try await service.waitFor(running) { $0["state"] as? String == "running" }
            let paused = try await service.send(.patch, "/queue", ["paused": true])
            #expect(paused.status == 200)
            #expect(try paused.json()["paused"] as? Bool == true)
            let waiting = try await service.create(["url": service.testdata("/testdata/1M")])["id"] as! String
            try await service.waitFor(running) { $0["state"] as? String == "completed" }
            // The running job finished; the new one never started.
            #expect(try await service.job(waiting)["state"] as? String == "queued")
            #expect(try await service.job(waiting)["bytesDone"] as? Int == 0)
            #expect(try await service.send(.patch, "/queue", ["paused": false]).status == 200)
            try await service.waitFor(waiting) { $0["state"] as? String == "completed" }
        }
    }

    @Test func nodesListThisNodeWithTheJobsItRuns() async throws {
        try await RouterHarness.with(configure: { $0.nodeName = "solo" }) { (service: RouterHarness) async throws in
            let running = try await service.create(["url": service.testdata("/testdata/64M?rate=2M")])["id"] as! String
            try await service.waitFor(running) { $0["state"] as? String == "running" }
            let reply = try await service.request(.get, "/nodes")
            #expect(reply.status == 200)
            let nodes = try #require(try reply.json()["nodes"] as? [[String: Any]])
            #expect(nodes.count == 1)
            #expect(nodes.first?["name"] as? String == "solo")
            #expect(nodes.first?["runningJobs"] as? [String] == [running])
            #expect((nodes.first?["heartbeatAge"] as? Double ?? -1) >= 0)
            #expect(try await service.request(.post, "/nodes").status == 405)
        }
    }

    @Test func maxActiveRaisedAndLoweredChangesHowManyRunWithinASecond() async throws {
        try await RouterHarness.with(maxActive: 1) { (service: RouterHarness) async throws in
            var ids: [String] = []
            for seed in 1...3 {
                ids.append(try await service.create(["url": service.testdata("/testdata/64M?rate=2M&seed=\(seed)")])["id"] as! String)
            }
            try await service.eventually("one runs") { try await service.runningCount() == 1 }
            #expect(try await service.send(.patch, "/queue", ["maxActive": 3]).status == 200)
            try await service.eventually("three run", timeout: .seconds(1)) { try await service.runningCount() == 3 }
            let lowered = try await service.send(.patch, "/queue", ["maxActive": 1])
            #expect((try lowered.json()["counts"] as? [String: Any])?["running"] as? Int == 1)
            try await service.eventually("one runs again", timeout: .seconds(1)) { try await service.runningCount() == 1 }
            // The oldest (all the same priority) kept its slot; the others wait, bytes kept.
            let states = try await service.states()
            #expect(states[ids[0]] == "running")
            #expect(states[ids[1]] == "queued")
            #expect(states[ids[2]] == "queued")
            #expect(try await service.request(.get, "/queue").json()["maxActive"] as? Int == 1)
        }
    }

    @Test func settingsSurviveARestartAndBadValuesChangeNothing() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            try await RouterHarness.with(maxActive: 2, dataDirectory: data) { (service: RouterHarness) async throws in
                let initial = try await service.request(.get, "/queue").json()
                #expect(initial["maxActive"] as? Int == 2)
                #expect(initial["paused"] as? Bool == false)
                #expect(initial["limitRate"] is NSNull)
                #expect(
                    Set((initial["counts"] as? [String: Any])?.keys ?? [:].keys) == ["queued", "running", "paused", "completed", "failed"])
                let changed = try await service.send(.patch, "/queue", ["paused": true, "maxActive": 7, "limitRate": 1_000_000])
                #expect(changed.status == 200)
                for (body, field) in [
                    (["maxActive": 0], "maxActive"), (["maxActive": 65], "maxActive"), (["limitRate": -5], "limitRate"),
                    (["paused": "no"], "paused"), (["workers": 2], "workers"),
                ] as [([String: Any], String)] {
                    let reply = try await service.send(.patch, "/queue", body)
                    #expect(reply.status == 400, "\(body)")
                    #expect(reply.errorCode == "invalid_field", "\(body)")
                    #expect(reply.errorField == field, "\(body)")
                }
            }
            // The flags say 2 again; the stored settings win.
            try await RouterHarness.with(maxActive: 2, dataDirectory: data) { (service: RouterHarness) async throws in
                let queue = try await service.request(.get, "/queue").json()
                #expect(queue["paused"] as? Bool == true)
                #expect(queue["maxActive"] as? Int == 7)
                #expect(queue["limitRate"] as? Int == 1_000_000)
            }
        }
    }

    @Test func aJobRateSetWhileItRunsAppliesAtOnce() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let id = try await service.create(["url": service.testdata("/testdata/64M?rate=16M"), "connections": 1])["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > 0 }
            #expect(try await service.send(.patch, "/jobs/\(id)", ["limitRate": 1 << 20]).status == 200)
            let (rate, later) = try await service.measuredRate(of: id)
            #expect(later["limitRate"] as? Int == 1 << 20)
            #expect(rate < 2.5 * Double(1 << 20), "\(rate) bytes/s under a 1 MiB/s job limit")
            // Removed: the job goes at the origin's pace again.
            let removed = try await service.send(.patch, "/jobs/\(id)", ["limitRate": NSNull()])
            #expect(try removed.json()["limitRate"] is NSNull)
        }
    }

    @Test func aQueueRateAppliesToRunningDownloadsAtOnce() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let id = try await service.create(["url": service.testdata("/testdata/64M?rate=16M"), "connections": 1])["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > 0 }
            #expect(try await service.send(.patch, "/queue", ["limitRate": 1 << 20]).status == 200)
            let (rate, later) = try await service.measuredRate(of: id)
            #expect(later["state"] as? String == "running")
            #expect(rate < 2.5 * Double(1 << 20), "\(rate) bytes/s under a 1 MiB/s limit")
        }
    }
}
