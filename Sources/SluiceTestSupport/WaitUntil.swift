/// Polls `condition` every `interval` until it holds or `timeout` passes; returns whether it
/// held (its last answer, asked once more at the deadline). Tests wait on state with this,
/// never with a fixed sleep.
@discardableResult
public func waitUntil(
    _ timeout: Duration, every interval: Duration = .milliseconds(50), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
