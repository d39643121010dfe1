import Foundation
import SluiceTestSupport
import Testing

/// Issue 21, point 10, through the API, in process: refused with a clear code, nothing
/// created or changed.
@Suite struct StrictInputTests {
    @Test func aBodyWithAKeyTwiceIsInvalidJSONAndChangesNothing() async throws {
        try await RouterHarness.with { service in
            let url = "http://127.0.0.1:9/file"
            let created = try await service.request(.post, "/jobs", json: #"{"url":"\#(url)","url":"\#(url)?seed=2","paused":true}"#)
            #expect(created.status == 400)
            #expect(created.errorCode == "invalid_json")
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
            let made = try await service.request(.post, "/jobs", json: #"{"url":"\#(url)","paused":true}"#)
            let id = try #require(try made.json()["id"] as? String)
            let edited = try await service.request(.patch, "/jobs/\(id)", json: #"{"priority":1,"priority":2}"#)
            #expect(edited.status == 400)
            #expect(edited.errorCode == "invalid_json")
            #expect(try await service.request(.get, "/jobs/\(id)").json()["priority"] as? Int == 0)
        }
    }
}
