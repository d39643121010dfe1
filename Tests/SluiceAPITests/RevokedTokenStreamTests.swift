import Foundation
import SluiceTestSupport
import Testing

/// Issue 35, finding 9: an event stream opened with a named token went on after the token
/// was revoked. What a revoked token opened ends with it.
@Suite struct RevokedTokenStreamTests {
    @Test(arguments: [false, true])
    func revokingANamedTokenEndsTheEventStreamItOpened(inQuery: Bool) async throws {
        try await RouterHarness.with(token: "admin-secret") { (service: RouterHarness) async throws in
            let made = try await service.request(.post, "/tokens", json: #"{"name":"dash","scope":"read"}"#)
            #expect(made.status == 201)
            let secret = try #require(try made.json()["token"] as? String)
            let stream = try await service.stream(
                "/events" + (inQuery ? "?access_token=\(secret)" : ""),
                headers: inQuery ? [:] : ["Authorization": "Bearer \(secret)"], authorized: false)
            #expect(stream.status == 200)
            // The admin's own stream is not the named token's: it stays.
            let admin = try await service.stream("/events")
            #expect(try await service.request(.delete, "/tokens/dash").status == 204)
            let ended = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for try await _ in stream.body {}
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    return false
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
            #expect(ended, "the revoked token's stream went on")
            #expect(admin.status == 200)
            // And the token opens nothing new.
            let again = try await service.request(.get, "/events", headers: ["Authorization": "Bearer \(secret)"], authorized: false)
            #expect(again.status == 401)
        }
    }
}
