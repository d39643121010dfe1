/// What a webhook tells: a job ended (`completed`, `failed`) or went (`removed`).
public enum WebhookEvent: String, Sendable, Codable, CaseIterable {
    case completed
    case failed
    case removed
}
