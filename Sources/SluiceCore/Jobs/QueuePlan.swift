/// Which jobs the queue starts and which it sends back: highest priority first, then oldest.
/// Pure: the scheduler passes what it has and acts on the answer.
public enum QueuePlan {
    public struct Candidate: Sendable, Equatable {
        public var id: String
        public var priority: Int
        /// Position in creation order: lower is older.
        public var sequence: Int

        public init(id: String, priority: Int, sequence: Int) {
            self.id = id
            self.priority = priority
            self.sequence = sequence
        }
    }

    /// The jobs to start: up to the free slots, from jobs ready to run.
    public static func starts(ready: [Candidate], running: Int, settings: QueueSettings) -> [String] {
        guard !settings.paused else { return [] }
        let free = settings.maxActive - running
        guard free > 0 else { return [] }
        return ready.sorted { ($0.priority, -$0.sequence) > ($1.priority, -$1.sequence) }.prefix(free).map(\.id)
    }

    /// The running jobs to send back to `queued` when more run than `maxActive` allows: the
    /// lowest priority first, the youngest among equals.
    public static func preemptions(running: [Candidate], settings: QueueSettings) -> [String] {
        let excess = running.count - settings.maxActive
        guard excess > 0 else { return [] }
        return running.sorted { ($0.priority, -$0.sequence) < ($1.priority, -$1.sequence) }.prefix(excess).map(\.id)
    }
}
