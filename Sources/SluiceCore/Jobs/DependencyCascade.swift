/// What a dependency's failure or removal does down the jobs that wait for it: a pure value
/// the scheduler walks, one job at a time.
///
/// A queued job whose dependency failed (or went before completing) fails with
/// `dependency_failed`, and so, in turn, do the queued jobs that wait for it. Paused and
/// failed jobs are left as they are (a resume waits again; a failed dependency can be
/// retried); running and completed ones no longer wait. The jobs that wait for each are
/// read once, so a chain of thousands fails in one linear pass. In a cluster a failure is
/// written only while the job is still as the node saw it: one that another node changed
/// first is not followed down.
public struct DependencyCascade: Sendable, Equatable {
    /// A job to fail, and why.
    public struct Step: Sendable, Equatable {
        public var id: String
        public var reason: String

        public init(id: String, reason: String) {
            self.id = id
            self.reason = reason
        }
    }

    private var pending: [Step]
    private let dependents: [String: [String]]
    private var failed: Set<String> = []

    /// From `starts` (the jobs to fail first, in order), with `dependents` the jobs that wait
    /// for each job, by its id.
    public init(starts: [Step], dependents: [String: [String]]) {
        pending = starts.reversed()
        self.dependents = dependents
    }

    /// The next job to fail, given each job's state now (nil: gone); nil when none is left.
    public mutating func next(state: (String) -> JobState?) -> Step? {
        while let step = pending.popLast() {
            guard let current = state(step.id), !failed.contains(step.id) else { continue }
            var lifecycle = JobLifecycle(state: current)
            _ = lifecycle.dependencyFailed()
            if lifecycle.state != current { return step }
        }
        return nil
    }

    /// `id`'s failure was recorded: the jobs waiting for it fail next.
    public mutating func recorded(_ id: String) {
        failed.insert(id)
        pending += (dependents[id] ?? []).reversed().map { Step(id: $0, reason: Self.failureReason(of: id)) }
    }

    /// Why the jobs waiting for a failed job fail.
    public static func failureReason(of id: String) -> String { "dependency \(id) failed" }

    /// Whether some job waits for `id`.
    public func isWaitedFor(_ id: String) -> Bool { dependents[id] != nil }

    /// What the jobs waiting for a removed job do: forget it when it had completed (it did
    /// its part), else fail, for that reason.
    public enum Removal: Sendable, Equatable {
        case forget
        case fail(reason: String)
    }

    public static func removal(of id: String, state: JobState) -> Removal {
        state == .completed ? .forget : .fail(reason: "dependency \(id) was deleted before it completed")
    }
}
