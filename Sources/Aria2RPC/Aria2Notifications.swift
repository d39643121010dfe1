public import SluiceCore

/// Which aria2 notification a job's change is (`aria2.onDownloadStart` and the rest),
/// decided from the state it was last seen in. One per WebSocket client: it keeps the
/// states of live jobs only, so it is as large as the queue, not as the history.
public struct Aria2Notifications: Sendable {
    private var states: [String: JobState] = [:]

    public init() {}

    /// Notes a job as it was when the client connected: no notification.
    public mutating func seed(_ job: JobSnapshot) {
        if job.state.isLive { states[job.id] = job.state }
    }

    /// The notification for a job's new snapshot, if its state changed into one aria2
    /// tells about.
    public mutating func change(_ job: JobSnapshot) -> String? {
        let before = states[job.id]
        if job.state.isLive { states[job.id] = job.state } else { states[job.id] = nil }
        guard before != job.state else { return nil }
        switch job.state {
        case .running: return "aria2.onDownloadStart"
        case .paused: return before == nil ? nil : "aria2.onDownloadPause"
        case .completed: return "aria2.onDownloadComplete"
        case .failed: return "aria2.onDownloadError"
        case .queued: return nil
        }
    }

    /// A job deleted: `onDownloadStop` if it was live.
    public mutating func removed(id: String) -> String? {
        states.removeValue(forKey: id) == nil ? nil : "aria2.onDownloadStop"
    }

    /// The JSON-RPC notification itself: `{"jsonrpc":"2.0","method":…,"params":[{"gid":…}]}`.
    public static func message(_ method: String, jobID: String) -> JSONValue {
        .object([
            ("jsonrpc", .string("2.0")), ("method", .string(method)),
            ("params", .array([.object([("gid", .string(Aria2GID.of(jobID: jobID)))])])),
        ])
    }
}
