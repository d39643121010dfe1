import AsyncHTTPClient
import Foundation
import NIOCore
import SluiceTestSupport
import Testing

/// Issue 35, finding 9: an event stream opened with a named token went on after the token
/// was revoked. What a revoked token opened ends with it.
@Suite struct RevokedTokenStreamTests {
    @Test(arguments: [false, true])
    func revokingANamedTokenEndsTheEventStreamItOpened(inQuery: Bool) async throws {
        try await ServiceHarness.with(token: "admin-secret") { service in
            let made = try await service.request(.POST, "/tokens", json: #"{"name":"dash","scope":"read"}"#)
            #expect(made.status == 201)
            let secret = try #require(try made.json()["token"] as? String)
            var request = HTTPClientRequest(url: service.base + "/events" + (inQuery ? "?access_token=\(secret)" : ""))
            request.headers.add(name: "Accept", value: "text/event-stream")
            if !inQuery { request.headers.add(name: "Authorization", value: "Bearer \(secret)") }
            let response = try await service.client.execute(request, timeout: .seconds(30))
            #expect(response.status == .ok)
            // The admin's own stream is not the named token's: it stays.
            var adminRequest = HTTPClientRequest(url: service.base + "/events")
            adminRequest.headers.add(name: "Authorization", value: "Bearer admin-secret")
            let adminResponse = try await service.client.execute(adminRequest, timeout: .seconds(30))
            #expect(try await service.request(.DELETE, "/tokens/dash").status == 204)
            let ended = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for try await _ in response.body {}
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
            #expect(adminResponse.status == .ok)
            // And the token opens nothing new.
            let again = try await service.request(.GET, "/events", headers: ["Authorization": "Bearer \(secret)"], authorized: false)
            #expect(again.status == 401)
        }
    }
}
