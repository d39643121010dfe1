/// Dependencies between jobs (`after`): which a job still waits for, which stop it for
/// good, and which edits would make a cycle. Pure values: the scheduler asks, then acts.
public enum JobDependencies {
    /// What a dependency is, seen from a job that waits for it.
    public enum Verdict: Equatable, Sendable {
        /// Every dependency completed: the job may start.
        case ready
        /// Waiting for these (not completed yet).
        case waiting([String])
        /// This one no longer exists: the job can never start and fails with
        /// `dependency_failed`. (A failed one is waited for: it can be retried. A job fails
        /// when a dependency fails while it waits, which the scheduler sees as it happens.)
        case failed(String, reason: String)
    }

    /// The verdict for a job waiting for `after`, given each job's state (nil: no such job).
    public static func verdict(after: [String], state: (String) -> JobState?) -> Verdict {
        var waiting: [String] = []
        for id in after {
            switch state(id) {
            case nil: return .failed(id, reason: "dependency \(id) was deleted before it completed")
            case .completed?: continue
            default: waiting.append(id)
            }
        }
        return waiting.isEmpty ? .ready : .waiting(waiting)
    }

    /// Whether making `id` wait for `after` would close a cycle: some job in `after` already
    /// waits, directly or through others, for `id` (or is `id`).
    public static func makesCycle(id: String, after: [String], dependencies: (String) -> [String]) -> Bool {
        var seen: Set<String> = []
        var stack = after
        while let next = stack.popLast() {
            if next == id { return true }
            guard seen.insert(next).inserted else { continue }
            stack.append(contentsOf: dependencies(next))
        }
        return false
    }
}
