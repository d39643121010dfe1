/// What a webhook tells: a job ended (`completed`, `failed`) or went (`removed`).
public enum WebhookEvent: String, Sendable, Codable, CaseIterable {
    case completed
    case failed
    case removed
}

extension WebhookEvent {
    /// The event a job's end tells: `completed` or `failed`; nil for any other state.
    public init?(ending state: JobState) {
        switch state {
        case .completed: self = .completed
        case .failed: self = .failed
        default: return nil
        }
    }
}
