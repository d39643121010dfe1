import Foundation
import SluiceTestSupport
import Testing

/// Issue 21, point 10, through the API: refused with a clear code, nothing created.
@Suite struct StrictInputTests {
    @Test func aBodyWithAKeyTwiceIsInvalidJSONAndChangesNothing() async throws {
        try await ServiceHarness.with { service in
            let url = service.testdata("/testdata/1K")
            let created = try await service.request(.POST, "/jobs", json: #"{"url":"\#(url)","url":"\#(url)?seed=2","paused":true}"#)
            #expect(created.status == 400)
            #expect(created.errorCode == "invalid_json")
            #expect(try await service.states().isEmpty)
            let id = try await service.create(["url": url, "paused": true])["id"] as! String
            let edited = try await service.request(.PATCH, "/jobs/\(id)", json: #"{"priority":1,"priority":2}"#)
            #expect(edited.status == 400)
            #expect(edited.errorCode == "invalid_json")
            #expect(try await service.job(id)["priority"] as? Int == 0)
        }
    }
}
