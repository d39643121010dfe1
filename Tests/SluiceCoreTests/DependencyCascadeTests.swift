import SluiceCore
import Testing

/// What a dependency's failure or removal does down the jobs that wait for it, as tables:
/// the jobs and their states, where it starts, which writes the store took, and the jobs
/// that fail, in order.
@Suite struct DependencyCascadeTests {
    struct Case: CustomTestStringConvertible {
        var name: String
        /// Each job's state and what it waits for.
        var jobs: [String: (state: JobState, after: [String])]
        var starts: [String]
        /// Failures the store refused (another node changed the job first).
        var refused: Set<String> = []
        var fails: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a chain of queued jobs fails link by link",
            jobs: ["a": (.queued, []), "b": (.queued, ["a"]), "c": (.queued, ["b"])], starts: ["a"], fails: ["a", "b", "c"]),
        Case(
            name: "a paused job stays, and what waits for it too",
            jobs: ["a": (.queued, []), "b": (.paused, ["a"]), "c": (.queued, ["b"])], starts: ["a"], fails: ["a"]),
        Case(
            name: "a running or completed job waits for nothing",
            jobs: ["a": (.queued, []), "b": (.running, ["a"]), "c": (.completed, ["a"])], starts: ["a"], fails: ["a"]),
        Case(
            name: "a diamond fails each job once",
            jobs: ["a": (.queued, []), "b": (.queued, ["a"]), "c": (.queued, ["a"]), "d": (.queued, ["b", "c"])], starts: ["a"],
            fails: ["a", "b", "d", "c"]),
        Case(
            name: "a failure the store refused is not followed",
            jobs: ["a": (.queued, []), "b": (.queued, ["a"]), "c": (.queued, ["b"])], starts: ["a"], refused: ["b"],
            fails: ["a", "b"]),
        Case(
            name: "several starts, in order, gone ones skipped",
            jobs: ["a": (.queued, []), "b": (.queued, []), "c": (.queued, ["b"])], starts: ["x", "b", "a"], fails: ["b", "c", "a"]),
    ]

    @Test(arguments: cases) func theJobsThatFail(_ rule: Case) {
        var states = rule.jobs.mapValues(\.state)
        var dependents: [String: [String]] = [:]
        for (id, job) in rule.jobs.sorted(by: { $0.key < $1.key }) {
            for dependency in job.after { dependents[dependency, default: []].append(id) }
        }
        var cascade = DependencyCascade(starts: rule.starts.map { .init(id: $0, reason: "first") }, dependents: dependents)
        var failed: [String] = []
        while let step = cascade.next(state: { states[$0] }) {
            failed.append(step.id)
            guard !rule.refused.contains(step.id) else { continue }
            states[step.id] = .failed
            cascade.recorded(step.id)
        }
        #expect(failed == rule.fails)
    }

    @Test func eachFailureSaysWhichDependencyFailedIt() {
        var states: [String: JobState] = ["a": .queued, "b": .queued]
        var cascade = DependencyCascade(
            starts: [.init(id: "a", reason: "dependency z was deleted before it completed")], dependents: ["a": ["b"]])
        var steps: [DependencyCascade.Step] = []
        while let step = cascade.next(state: { states[$0] }) {
            steps.append(step)
            states[step.id] = .failed
            cascade.recorded(step.id)
        }
        #expect(steps.map(\.reason) == ["dependency z was deleted before it completed", "dependency a failed"])
        #expect(DependencyCascade.removal(of: "z", state: .completed) == .forget)
        for state in [JobState.queued, .running, .paused, .failed] {
            #expect(DependencyCascade.removal(of: "z", state: state) == .fail(reason: "dependency z was deleted before it completed"))
        }
    }

    /// A chain of 20,000 fails in one linear pass (each job's dependents read once).
    @Test func aLongChainFailsInOnePass() {
        let count = 20_000
        var states: [String: JobState] = [:]
        var dependents: [String: [String]] = [:]
        for index in 0..<count {
            states["j\(index)"] = .queued
            if index > 0 { dependents["j\(index - 1)"] = ["j\(index)"] }
        }
        var cascade = DependencyCascade(starts: [.init(id: "j0", reason: "first")], dependents: dependents)
        var steps = 0
        var asked = 0
        while let step = cascade.next(state: {
            asked += 1
            return states[$0]
        }) {
            steps += 1
            states[step.id] = .failed
            cascade.recorded(step.id)
        }
        #expect(steps == count)
        #expect(asked == count)
    }
}
