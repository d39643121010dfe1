public import ServiceLifecycle

/// Runs `services` beside `body` and cancels them once it has returned: what a service group
/// does for a part a test drives alone (a scheduler's store writers, say).
public func withServices<T: Sendable>(_ services: [any Service], _ body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
        for service in services { group.addTask { try await service.run() } }
        defer { group.cancelAll() }
        return try await body()
    }
}
