import Foundation
import JobService
import SluiceCore
import Testing

/// The job table's indexes agree with its jobs whatever order they came in.
@Suite struct JobTableTests {
    static func job(_ id: String, age: Double, state: JobState = .queued) -> JobSnapshot {
        JobSnapshot(
            id: id, url: "https://example.com/\(id)", state: state, connections: 1, priority: 0,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000 + age), requestedFilename: nil, expectedDigest: nil, headers: [:]
        )
    }

    @Test func jobsFromAnotherNodeTakeTheirPlaceByAgeAndEveryIndexFollows() {
        let table = JobTable()
        for (id, age) in [("a", 0.0), ("c", 2), ("e", 4)] { table[id] = Self.job(id, age: age, state: .paused) }
        table.insertByAge(Self.job("d", age: 3))
        table.insertByAge(Self.job("b", age: 1))
        table.insertByAge(Self.job("f", age: 5, state: .failed))
        #expect(table.orderedIDs == ["a", "b", "c", "d", "e", "f"])
        #expect(table.list(states: nil, limit: 10, after: nil)?.map(\.id) == ["f", "e", "d", "c", "b", "a"])
        #expect(table.list(states: [.paused], limit: 10, after: nil)?.map(\.id) == ["e", "c", "a"])
        #expect(table.list(states: [.paused, .queued], limit: 2, after: "d")?.map(\.id) == ["c", "b"])
        #expect(table.readyToStart(at: Date()).map(\.id) == ["b", "d"])
        #expect(table.readyToStart(at: Date()).map(\.sequence) == [1, 3])
        #expect(table.countsByState()[.paused] == 3 && table.countsByState()[.queued] == 2)
        // A state change and a removal move the job between the indexes.
        table["d"] = Self.job("d", age: 3, state: .paused)
        table["c"] = nil
        #expect(table.list(states: [.paused], limit: 10, after: nil)?.map(\.id) == ["e", "d", "a"])
        #expect(table.jobs(in: [.queued]).map(\.id) == ["b"])
        #expect(table.snapshot(limit: 3).map(\.id) == ["b", "d", "e"], "the newest live ones, oldest first")
        #expect(table.countsByState()[.paused] == 3 && table.countsByState()[.queued] == 1 && table.count == 5)
    }

    /// The ready index (issue 37, point 6: every schedule read every queued job): with a
    /// limit, the jobs the queue's plan would take first, from each priority and among those
    /// whose `Retry-After` passed; it follows priority, dependency, retry and state changes,
    /// removals, and jobs placed by age.
    @Test func theJobsReadyToStartAreReadFromTheirIndexAndItFollowsEveryChange() {
        let table = JobTable()
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        for index in 0..<200 { table["q\(index)"] = Self.job("q\(index)", age: Double(index)) }
        let plan = { (limit: Int) in
            QueuePlan.starts(
                ready: table.readyToStart(at: now, limit: limit), running: 0, settings: QueueSettings(maxActive: limit, limitRate: nil))
        }
        #expect(plan(3) == ["q0", "q1", "q2"])
        #expect(table.readyToStart(at: now, limit: 3).count == 3, "three of 200, not every queued job")
        // A younger job of a higher priority goes first.
        var urgent = Self.job("q150", age: 150)
        urgent.priority = 5
        table["q150"] = urgent
        #expect(plan(2) == ["q150", "q0"])
        // Waiting for another, or out on a Retry-After, a job is not ready; one whose
        // Retry-After passed is.
        var waiting = Self.job("q0", age: 0)
        waiting.after = ["x"]
        waiting.waitingFor = ["x"]
        table["q0"] = waiting
        var retrying = Self.job("q1", age: 1)
        retrying.retryAt = now.addingTimeInterval(10)
        table["q1"] = retrying
        #expect(plan(3) == ["q150", "q2", "q3"])
        retrying.retryAt = now.addingTimeInterval(-1)
        table["q1"] = retrying
        #expect(plan(3) == ["q150", "q1", "q2"])
        // Running or removed, it leaves; placed by age, it takes its place.
        table["q150"] = {
            var job = urgent
            job.state = .running
            return job
        }()
        table["q2"] = nil
        table.insertByAge(Self.job("early", age: -1))
        #expect(plan(3) == ["early", "q1", "q3"])
        // Without a limit, every ready job, oldest first (as before).
        #expect(table.readyToStart(at: now).count == 198)
        #expect(table.readyToStart(at: now).map(\.sequence) == table.readyToStart(at: now).map(\.sequence).sorted())
        // After many removals it still agrees.
        for index in 3..<150 { table["q\(index)"] = nil }
        #expect(plan(3) == ["early", "q1", "q151"])
        #expect(table.readyToStart(at: now).count == 51)
        // Made again when the table compacts its removed places.
        for index in 0..<2000 { table["r\(index)"] = Self.job("r\(index)", age: 1000 + Double(index)) }
        for index in 0..<1990 { table["r\(index)"] = nil }
        #expect(plan(3) == ["early", "q1", "q151"])
        #expect(table.readyToStart(at: now).count == 61)
        #expect(
            table.readyToStart(at: now, limit: 1).map(\.id) == ["early", "q1"], "the oldest of each priority, and those past a Retry-After")
    }

    /// A page past an offset, the same jobs as the pages before it skipped one by one: for
    /// every state, several, and none (the dashboard's list scrolled far).
    @Test func aPageAtAnOffsetIsThePageThatManyJobsFurtherOn() {
        let table = JobTable()
        let states: [JobState] = [.paused, .queued, .paused, .running, .failed, .paused, .queued]
        for (index, state) in states.enumerated() { table["j\(index)"] = Self.job("j\(index)", age: Double(index), state: state) }
        table["j2"] = nil  // a hole
        for filter in [nil, [.paused], [.paused, .queued], [.completed]] as [Set<JobState>?] {
            let all = table.list(states: filter, limit: 100, after: nil) ?? []
            for offset in 0...all.count + 1 {
                let page = table.list(states: filter, limit: 2, after: nil, offset: offset)?.map(\.id)
                #expect(page == Array(all.dropFirst(offset).prefix(2)).map(\.id), "\(String(describing: filter)) at \(offset)")
            }
        }
        #expect(table.list(states: [.paused], limit: 5, after: "j6", offset: 1)?.map(\.id) == ["j0"])
    }

    /// Many stored jobs adopted at once (a bulk resume of failed jobs) take their places by
    /// age in one pass, the same places one by one would give them, and leave the store's
    /// count. One by one, each moved every position after it: a million was quadratic.
    @Test func manyAdoptedJobsTakeTheirPlacesByAgeInOnePass() {
        let table = JobTable()
        for (id, age) in [("a", 0.0), ("c", 2), ("e", 4)] { table[id] = Self.job(id, age: age, state: .paused) }
        table.setStoredOnly([.failed: 4])
        table["x"] = nil  // a hole
        let stored = [("f", 5.0), ("b", 1), ("d", 3), ("c2", 2)].map { Self.job($0.0, age: $0.1, state: .failed) }
        table.adopt(stored + [Self.job("a", age: 0, state: .failed)])
        #expect(table.orderedIDs == ["a", "b", "c", "c2", "d", "e", "f"], "a held job of the same age stays first")
        #expect(table.list(states: [.failed], limit: 10, after: nil)?.map(\.id) == ["f", "d", "c2", "b"])
        #expect(table.list(states: [.paused], limit: 10, after: nil)?.map(\.id) == ["e", "c", "a"])
        #expect(table.list(states: nil, limit: 3, after: "c2")?.map(\.id) == ["c", "b", "a"])
        #expect(table.countsByState()[.failed] == 4, "held now, not counted twice")
        #expect(table.storedOnly(in: [.failed]) == 0)
        #expect(table["a"]?.state == .paused, "a held job is not replaced by its stored row")
        // Many, older than everything held: one pass, not one per job.
        let many = (0..<20_000).map { Self.job("old\($0)", age: -200_000 + Double($0), state: .failed) }
        let start = ContinuousClock.now
        table.adopt(many)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(table.count == 20_007)
        #expect(table.orderedIDs.prefix(2) == ["old0", "old1"])
    }

    /// The table's part of a page whose cursor is a stored job: found by date, below it, holes
    /// and jobs made at the same second included.
    @Test func aPageBelowADateSkipsHolesAndOrdersTiesById() {
        let table = JobTable()
        table.load((0..<10).map { Self.job("j\($0)", age: Double($0), state: $0 % 2 == 0 ? .queued : .paused) })
        table.insertByAge(Self.job("k5", age: 5))
        table["j4"] = nil
        table["j6"] = nil
        let date = Self.job("x", age: 5).createdAt
        #expect(table.list(states: Set(JobState.allCases), limit: 3, madeBefore: (date, "k")).map(\.id) == ["j5", "j3", "j2"])
        #expect(table.list(states: Set(JobState.allCases), limit: 3, madeBefore: (date, "z")).map(\.id) == ["k5", "j5", "j3"])
        #expect(table.list(states: [.queued], limit: 10, madeBefore: (date.addingTimeInterval(3), "a")).map(\.id) == ["k5", "j2", "j0"])
        #expect(
            table.list(states: [.paused], limit: 10, madeBefore: (date.addingTimeInterval(100), "a")).map(\.id) == [
                "j9", "j7", "j5", "j3", "j1",
            ])
        #expect(table.list(states: [.paused], limit: 10, madeBefore: (date.addingTimeInterval(-100), "a")).isEmpty)
    }

    @Test func manyRemovalsCompactWithoutLosingTheOrder() {
        let table = JobTable()
        for index in 0..<5000 { table["j\(index)"] = Self.job("j\(index)", age: Double(index), state: index % 2 == 0 ? .queued : .paused) }
        for index in 0..<4000 { table["j\(index)"] = nil }
        #expect(table.count == 1000)
        #expect(table.orderedIDs.first == "j4000")
        #expect(table.list(states: [.queued], limit: 2, after: nil)?.map(\.id) == ["j4998", "j4996"])
        #expect(table.list(states: nil, limit: 1, after: "j4001")?.map(\.id) == ["j4000"])
        #expect(table.readyToStart(at: Date()).first?.id == "j4000")
    }
}
