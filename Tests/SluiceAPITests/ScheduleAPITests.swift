import Foundation
import SluiceAPI
import SluiceServer
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// A wall clock a test sets and steps while real time runs under it (waits and rates stay
/// real): the schedule's ticks read it as `sluice serve` reads the system's.
final class SteppedWallClock: Sendable {
    private let offset: Mutex<TimeInterval>

    init(at date: Date) { offset = Mutex(date.timeIntervalSinceNow) }

    var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    func set(_ date: Date) { offset.withLock { $0 = date.timeIntervalSinceNow } }

    var clock: ElapsedClock {
        let real = ElapsedClock.continuous
        return ElapsedClock(elapsed: real.elapsed, sleep: real.sleep, now: { [self] in now })
    }
}

/// CONTRACT.md §7: `GET`/`PUT /schedule`, and what the schedule sets applied to the queue
/// from the wall clock's time: at start, at a boundary, after a step of the clock.
@Suite struct ScheduleAPITests {
    /// Berlin's local time on Monday 2026-12-07 (UTC+1).
    static func berlin(_ hour: Int, _ minute: Int = 0, _ second: Double = 0, day: Int = 7) -> Date {
        RFC3339.date(String(format: "2026-12-%02d", day) + String(format: "T%02d:%02d:00+01:00", hour, minute))!
            .addingTimeInterval(second)
    }

    /// The contract's example.
    static let workWeek = #"""
        {"timeZone": "Europe/Berlin", "rules": [
          {"days": ["mon","tue","wed","thu","fri"], "from": "08:00", "to": "18:00", "limitRate": 524288, "maxActive": 1},
          {"days": "*", "from": "08:00", "to": "02:00", "run": false}]}
        """#

    @Test func aBoundaryAppliesWithinASecondAndAClosedWindowSendsRunningJobsBackWithTheirBytes() async throws {
        let wall = SteppedWallClock(at: Self.berlin(7, 59, 50))
        try await RouterHarness.with(configure: { $0.clock = wall.clock }) { (service: RouterHarness) async throws in
            let put = try await service.call(.put, "/schedule", json: Self.workWeek)
            #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
            var queue = try await service.request(.get, "/queue").json()
            #expect(queue["run"] as? Bool == true)
            #expect(queue["maxActive"] as? Int == 3)
            #expect((queue["setBy"] as? [String: Any])?["run"] as? String == "queue")
            #expect(queue["next"] as? String == "2026-12-07T07:00:00Z", "08:00 in Berlin")
            let id = try await service.create(["url": service.testdata("/testdata/64M?rate=4M")])["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > 0 }
            // The clock reaches 08:00: the window closes within a second of the tick.
            wall.set(Self.berlin(8, 0, 0.2))
            let stepped = ContinuousClock.now
            try await service.eventually("the window closes", timeout: .seconds(5)) {
                try await service.request(.get, "/queue").json()["run"] as? Bool == false
            }
            #expect(ContinuousClock.now - stepped < .seconds(2), "applied \(ContinuousClock.now - stepped) after the boundary")
            queue = try await service.request(.get, "/queue").json()
            #expect(queue["maxActive"] as? Int == 1)
            #expect(queue["limitRate"] as? Int == 524_288)
            let setBy = try #require(queue["setBy"] as? [String: Any])
            #expect(setBy["run"] as? String == "rules[1]")
            #expect(setBy["limitRate"] as? String == "rules[0]")
            #expect(queue["next"] as? String == "2026-12-07T17:00:00Z", "18:00 in Berlin")
            let sentBack = try await service.waitFor(id) { $0["state"] as? String == "queued" }
            let kept = sentBack["bytesDone"] as? Int ?? 0
            #expect(kept > 0, "its bytes are kept")
            // Held: the slot it gave back is not given to it again while the window is closed.
            // (A cluster node's stop may record its last checkpoint's bytes a moment later.)
            let stillHeld = try await service.job(id)
            #expect(stillHeld["state"] as? String == "queued" && stillHeld["heldBy"] as? String == "window", "\(stillHeld)")
            #expect((stillHeld["bytesDone"] as? Int ?? 0) >= kept)
            // A manual resume of the queue opens the window until the rule's next change.
            let opened = try await service.send(.patch, "/queue", ["paused": false])
            #expect(opened.status == 200)
            let openedJSON = try opened.json()
            #expect(openedJSON["run"] as? Bool == true)
            #expect((openedJSON["setBy"] as? [String: Any])?["run"] as? String == "override")
            #expect(openedJSON["overrideUntil"] as? String == "2026-12-07T17:00:00Z")
            let resumed = try await service.waitFor(id) { $0["state"] as? String == "running" }
            #expect((resumed["bytesDone"] as? Int ?? 0) >= kept)
            // A step of the clock back to before the rules: the queue's own values at the next tick.
            wall.set(Self.berlin(6))
            try await service.eventually("the rules end", timeout: .seconds(5)) {
                try await service.request(.get, "/queue").json()["maxActive"] as? Int == 3
            }
        }
    }

    @Test func aServiceStartedInsideARuleIsInsideItAtOnceAndTheScheduleIsKept() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            let wall = SteppedWallClock(at: Self.berlin(6))
            try await RouterHarness.with(dataDirectory: data, configure: { $0.clock = wall.clock }) {
                (service: RouterHarness) async throws in
                #expect(try await service.call(.put, "/schedule", json: Self.workWeek).status == 200)
                #expect(try await service.request(.get, "/queue").json()["run"] as? Bool == true)
            }
            // Restarted at 09:00: the first answer is already inside both rules.
            wall.set(Self.berlin(9))
            try await RouterHarness.with(dataDirectory: data, configure: { $0.clock = wall.clock }) {
                (service: RouterHarness) async throws in
                let queue = try await service.request(.get, "/queue").json()
                #expect(queue["run"] as? Bool == false)
                #expect(queue["limitRate"] as? Int == 524_288)
                let schedule = try await service.request(.get, "/schedule").json()
                #expect(schedule["timeZone"] as? String == "Europe/Berlin")
                #expect((schedule["rules"] as? [Any])?.count == 2)
                #expect((schedule["inEffect"] as? [String: Any])?["run"] as? Bool == false)
            }
        }
    }

    @Test func aBadScheduleIsRefusedNamingTheFieldAndChangesNothing() async throws {
        try await RouterHarness.with(token: "admin") { (service: RouterHarness) async throws in
            #expect(try await service.call(.put, "/schedule", json: Self.workWeek).status == 200)
            let before = try await service.request(.get, "/schedule").body
            for (body, field) in [
                (#"{"rules":[{"from":"08:00","to":"25:00","run":false}]}"#, "rules[0].to"),
                (#"{"timeZone":"Nowhere/Special","rules":[]}"#, "timeZone"),
                (#"{"timetable":"Mon-08:00,fast"}"#, "timetable"),
                (#"{"rules":[],"enabled":true}"#, "enabled"),
            ] {
                let reply = try await service.call(.put, "/schedule", json: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == "invalid_field", "\(body)")
                #expect(reply.errorField == field, "\(body)")
            }
            #expect(try await service.call(.put, "/schedule", json: "[1]").status == 400)
            #expect(try await service.request(.get, "/schedule").body == before)
            // A PATCH /queue with a bad `until` changes nothing either.
            let bad = try await service.send(.patch, "/queue", ["maxActive": 2, "until": "tomorrow"])
            #expect(bad.errorField == "until")
            #expect(try await service.request(.get, "/queue").json()["maxActive"] as? Int == 3)
            // Reading is for every token; changing it is for the service's own (admin).
            #expect(try await service.request(.delete, "/schedule").status == 405)
        }
    }

    @Test func aScheduleFromTheFlagIsStoredAndInEffect() async throws {
        let schedule = try Schedule(json: JSONDecoder().decode(JSONValue.self, from: Data(#"{"timetable":"00:00,1M"}"#.utf8)))
        try await RouterHarness.with(configure: { $0.schedule = schedule }) { (service: RouterHarness) async throws in
            let queue = try await service.request(.get, "/queue").json()
            #expect(queue["limitRate"] as? Int == 1 << 20)
            #expect(try await service.request(.get, "/schedule").json()["timetable"] as? String == "00:00,1M")
        }
    }
}

/// CONTRACT.md §7: `startAt`, `heldBy` and `ignoreSchedule`.
@Suite struct StartAtAndHeldByTests {
    static func text(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: date)
    }

    @Test func aJobWaitsForItsStartAtHeldAndTakingNoSlotThenStartsByItself() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            let wall = SteppedWallClock(at: ScheduleAPITests.berlin(10))
            let later = ScheduleAPITests.berlin(11)
            let made = Mutex<String?>(nil)
            try await RouterHarness.with(maxActive: 1, dataDirectory: data, configure: { $0.clock = wall.clock }) {
                (service: RouterHarness) async throws in
                let job = try await service.create(["url": service.testdata("/testdata/1M"), "startAt": Self.text(later)])
                let id = job["id"] as! String
                made.withLock { $0 = id }
                #expect(job["state"] as? String == "queued")
                #expect(job["heldBy"] as? String == "startAt")
                #expect(job["startAt"] as? String == "2026-12-07T10:00:00Z")
                // It takes no slot: another job runs meanwhile.
                let other = try await service.create(["url": service.testdata("/testdata/256K?seed=2")])["id"] as! String
                try await service.waitFor(other) { $0["state"] as? String == "completed" }
                let held = try await service.request(.get, "/jobs?heldBy=startAt").json()["jobs"] as? [[String: Any]]
                #expect(held?.map { $0["id"] as? String } == [id])
                #expect((try await service.request(.get, "/jobs?heldBy=window").json()["jobs"] as? [Any])?.isEmpty == true)
                #expect(try await service.job(id)["bytesDone"] as? Int == 0)
            }
            let id = try #require(made.withLock { $0 })
            // Kept across a restart; a step of the clock past the instant starts it.
            try await RouterHarness.with(maxActive: 1, dataDirectory: data, configure: { $0.clock = wall.clock }) {
                (service: RouterHarness) async throws in
                #expect(try await service.job(id)["heldBy"] as? String == "startAt")
                wall.set(later.addingTimeInterval(1))
                let done = try await service.waitFor(id, timeout: .seconds(10)) { $0["state"] as? String == "completed" }
                #expect(done["heldBy"] is NSNull)
            }
        }
    }

    @Test func aStartAtIsChangedOrRemovedByPatchAndCheckedLikeAnyField() async throws {
        let wall = SteppedWallClock(at: ScheduleAPITests.berlin(10))
        try await RouterHarness.with(configure: { $0.clock = wall.clock }) { (service: RouterHarness) async throws in
            for bad in ["tomorrow", "2026-12-07 10:00", "2026-13-01T00:00:00Z", "2026-12-07T10:00:00"] {
                let reply = try await service.send(.post, "/jobs", ["url": service.testdata("/testdata/1K"), "startAt": bad])
                #expect(reply.status == 400, "\(bad)")
                #expect(reply.errorField == "startAt", "\(bad)")
            }
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
            // A past instant starts now.
            let past = try await service.create(["url": service.testdata("/testdata/1K"), "startAt": "2020-01-01T00:00:00Z"])
            try await service.waitFor(past["id"] as! String) { $0["state"] as? String == "completed" }
            let id =
                try await service.create(
                    ["url": service.testdata("/testdata/1K?seed=3"), "startAt": Self.text(ScheduleAPITests.berlin(23))])["id"] as! String
            #expect(try await service.send(.patch, "/jobs/\(id)", ["startAt": "garbage"]).errorField == "startAt")
            let removed = try await service.send(.patch, "/jobs/\(id)", ["startAt": NSNull()])
            #expect(removed.status == 200)
            #expect(try removed.json()["startAt"] is NSNull)
            try await service.waitFor(id) { $0["state"] as? String == "completed" }
        }
    }

    @Test func aClosedWindowHoldsEveryJobButThoseThatIgnoreTheSchedule() async throws {
        let wall = SteppedWallClock(at: ScheduleAPITests.berlin(9))
        try await RouterHarness.with(configure: { $0.clock = wall.clock }) { (service: RouterHarness) async throws in
            #expect(try await service.call(.put, "/schedule", json: ScheduleAPITests.workWeek).status == 200)
            let held = try await service.create(["url": service.testdata("/testdata/1M")])
            #expect(held["heldBy"] as? String == "window")
            let ignoring = try await service.create(["url": service.testdata("/testdata/1M?seed=4"), "ignoreSchedule": true])
            #expect(ignoring["ignoreSchedule"] as? Bool == true)
            try await service.waitFor(ignoring["id"] as! String) { $0["state"] as? String == "completed" }
            let listed = try await service.request(.get, "/jobs?heldBy=window").json()["jobs"] as? [[String: Any]]
            #expect(listed?.map { $0["id"] as? String } == [held["id"] as? String])
            #expect(try await service.request(.get, "/jobs?heldBy=later").errorField == "heldBy")
            // Told to ignore the schedule, the held one goes.
            #expect(try await service.send(.patch, "/jobs/\(held["id"] as! String)", ["ignoreSchedule": true]).status == 200)
            try await service.waitFor(held["id"] as! String) { $0["state"] as? String == "completed" }
        }
    }
}

/// CONTRACT.md §7, "Quotas".
@Suite struct QuotaAPITests {
    @Test func atTheDaysQuotaRunningJobsWaitWithTheirBytesUntilTheNextDay() async throws {
        let wall = SteppedWallClock(at: ScheduleAPITests.berlin(20))
        try await RouterHarness.with(configure: { $0.clock = wall.clock }) { (service: RouterHarness) async throws in
            let set = try await service.send(.patch, "/queue", ["quota": ["day": 2 << 20]])
            #expect(set.status == 200, "\(String(decoding: set.body, as: UTF8.self))")
            // 3 MiB under 2 MiB a day: it waits at 2 MiB, and finishes the next day.
            let id = try await service.create(["url": service.testdata("/testdata/3M?rate=4M")])["id"] as! String
            let held = try await service.waitFor(id) { $0["heldBy"] as? String == "quota" }
            #expect(held["state"] as? String == "queued")
            let queue = try await service.request(.get, "/queue").json()
            #expect(queue["heldBy"] as? String == "quota")
            let quota = try #require(queue["quota"] as? [String: Any])
            let used = try #require((quota["used"] as? [String: Any])?["day"] as? Int)
            #expect(used >= 2 << 20)
            #expect((quota["remaining"] as? [String: Any])?["day"] as? Int == 0)
            // What was in flight when it held: the quota's accuracy for one job at 4 MiB/s.
            #expect(used - (2 << 20) <= 1 << 20, "\(used - (2 << 20)) bytes past the quota")
            let kept = try await service.job(id)["bytesDone"] as? Int ?? 0
            #expect(kept >= 2 << 20)
            // A new job waits too; the next day (Berlin's midnight, the schedule's zone) both go on.
            let other = try await service.create(["url": service.testdata("/testdata/256K?seed=2")])
            #expect(other["heldBy"] as? String == "quota")
            #expect(try await service.call(.put, "/schedule", json: #"{"timeZone":"Europe/Berlin","rules":[]}"#).status == 200)
            wall.set(ScheduleAPITests.berlin(0, 0, 1, day: 8))
            let done = try await service.waitFor(id, timeout: .seconds(20)) { $0["state"] as? String == "completed" }
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 3 << 20), "\(done)")
            try await service.waitFor(other["id"] as! String) { $0["state"] as? String == "completed" }
            // A bad quota changes nothing.
            #expect(try await service.send(.patch, "/queue", ["quota": ["day": -1]]).errorField == "quota.day")
            let after = try await service.request(.get, "/queue").json()["quota"] as? [String: Any]
            #expect(after?["day"] as? Int == 2 << 20)
        }
    }
}

extension QuotaAPITests {
    /// The counts stored every 5 s were lost when the service stopped sooner: a restart
    /// forgot what was downloaded since.
    @Test func theCountsSurviveAStopRightAfterTheBytes() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            try await RouterHarness.with(dataDirectory: data) { (service: RouterHarness) async throws in
                #expect(try await service.send(.patch, "/queue", ["quota": ["day": 64 << 20]]).status == 200)
                let id = try await service.create(["url": service.testdata("/testdata/1M")])["id"] as! String
                try await service.waitFor(id) { $0["state"] as? String == "completed" }
            }
            try await RouterHarness.with(dataDirectory: data) { (service: RouterHarness) async throws in
                let quota = try await service.request(.get, "/queue").json()["quota"] as? [String: Any]
                #expect(((quota?["used"] as? [String: Any])?["day"] as? Int ?? 0) >= 1 << 20, "\(quota ?? [:])")
            }
        }
    }
}

/// A cluster's quota counts every node's bytes (CONTRACT.md §7: "kept in the store"). Each
/// node stored its own counts over the others', so two nodes could each fetch a whole quota.
@Suite(.enabled(if: TestPostgres.unavailable == nil, "PostgreSQL 15 cannot be installed or started here by scripts/postgres.sh"))
struct ClusterQuotaTests {
    @Test func twoNodesCountIntoOneQuotaAndBothHoldAtIt() async throws {
        let database = try TestPostgres.newDatabase()
        let store: @Sendable (String) -> @Sendable (inout ServiceConfiguration) -> Void = { name in
            { configuration in
                configuration.store = try? PostgresLocation(database)
                configuration.nodeName = name
            }
        }
        try await RouterHarness.with(maxActive: 1, configure: store("quota-a")) { (a: RouterHarness) async throws in
            try await RouterHarness.with(maxActive: 1, configure: store("quota-b")) { (b: RouterHarness) async throws in
                #expect(try await a.send(.patch, "/queue", ["quota": ["day": 3 << 20]]).status == 200)
                // Each node fetches 2 MiB: under the quota alone, over it together.
                for (node, seed) in [(a, 1), (b, 2)] {
                    let id = try await node.create(["url": node.testdata("/testdata/2M?seed=\(seed)")])["id"] as! String
                    try await node.waitFor(id, timeout: .seconds(30)) { $0["state"] as? String == "completed" }
                }
                // Within an exchange (5 s), each node shows both nodes' bytes, and holds.
                for node in [a, b] {
                    let held = try await waitUntil(.seconds(20), every: .milliseconds(100)) {
                        let queue = try await node.request(.get, "/queue").json()
                        let used = ((queue["quota"] as? [String: Any])?["used"] as? [String: Any])?["day"] as? Int ?? 0
                        return used >= 4 << 20 && queue["heldBy"] as? String == "quota"
                    }
                    let queue = try await node.request(.get, "/queue").json()
                    #expect(held, "\(queue)")
                }
                let next = try await b.create(["url": b.testdata("/testdata/256K?seed=3")])
                #expect(next["heldBy"] as? String == "quota", "\(next)")
            }
        }
    }
}

/// bench/RESULTS.md's boundary delay and quota accuracy: run with SLUICE_BENCH=1 (in process,
/// a stepped wall clock; it prints).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["SLUICE_BENCH"] == "1")) struct ScheduleBenchTests {
    /// 20 boundaries a minute apart, each limiting the rate to another value: the wall clock is
    /// set 0.3 s before each, and the delay is from the boundary to the `/queue` that shows it.
    @Test func twentyBoundaries() async throws {
        let start = ScheduleAPITests.berlin(9)
        let wall = SteppedWallClock(at: start)
        let rules = (0..<20).map { minute in
            #"{"days":"*","from":"09:\#(String(format: "%02d", minute + 1))","to":"09:\#(String(format: "%02d", minute + 2))","limitRate":\#((minute + 1) << 20)}"#
        }
        try await RouterHarness.with(configure: { $0.clock = wall.clock }) { (service: RouterHarness) async throws in
            let body = #"{"timeZone":"Europe/Berlin","rules":[\#(rules.joined(separator: ","))]}"#
            #expect(try await service.call(.put, "/schedule", json: body).status == 200)
            var delays: [Double] = []
            for minute in 0..<20 {
                let boundary = start.addingTimeInterval(Double(minute + 1) * 60)
                wall.set(boundary.addingTimeInterval(-0.3))
                let set = ContinuousClock.now
                try await service.eventually("boundary \(minute)", timeout: .seconds(5)) {
                    try await service.request(.get, "/queue").json()["limitRate"] as? Int == (minute + 1) << 20
                }
                delays.append(max(0, (ContinuousClock.now - set) / .seconds(1) - 0.3))
            }
            print(
                String(format: "20 boundaries: delay after the boundary max %.3f s, median %.3f s", delays.max() ?? 0, delays.sorted()[10]))
            #expect(delays.max() ?? 0 < 1.0)
        }
    }

    /// Four jobs at 4 MiB/s each under a 16 MiB day quota: what they fetched past it.
    @Test func quotaAccuracy() async throws {
        let wall = SteppedWallClock(at: ScheduleAPITests.berlin(20))
        try await RouterHarness.with(maxActive: 4, configure: { $0.clock = wall.clock }) { (service: RouterHarness) async throws in
            #expect(try await service.send(.patch, "/queue", ["quota": ["day": 16 << 20]]).status == 200)
            var ids: [String] = []
            for seed in 1...4 {
                ids.append(try await service.create(["url": service.testdata("/testdata/64M?rate=4M&seed=\(seed)")])["id"] as! String)
            }
            for id in ids { try await service.waitFor(id) { $0["heldBy"] as? String == "quota" } }
            let quota = try await service.request(.get, "/queue").json()["quota"] as? [String: Any]
            let used = (quota?["used"] as? [String: Any])?["day"] as? Int ?? 0
            var done = 0
            for id in ids { done += try await service.job(id)["bytesDone"] as? Int ?? 0 }
            print(
                "quota 16 MiB, 4 jobs at 4 MiB/s: used \(used - (16 << 20)) bytes past it (\((used - (16 << 20)) / 4) a job); on disk \(done - (16 << 20)) past it"
            )
            #expect(used >= 16 << 20)
        }
    }
}
