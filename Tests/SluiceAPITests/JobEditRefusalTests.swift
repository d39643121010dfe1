import Foundation
import SluiceTestSupport
import Testing

/// `PATCH /jobs/ID` refused: a completed job, an unknown or bad field, an unknown job; a
/// refused edit changes nothing. In process (`RouterHarness`).
@Suite struct JobEditRefusalTests {
    @Test func completedJobsUnknownFieldsAndBadValuesAreRefused() async throws {
        try await RouterHarness.with { service in
            let done = try await service.create(["url": service.testdata("/testdata/10K")])["id"] as! String
            try await service.waitFor(done) { $0["state"] as? String == "completed" }
            let completed = try await service.send(.patch, "/jobs/\(done)", ["priority": 1])
            #expect(completed.status == 409)
            #expect(try await service.job(done)["priority"] as? Int == 0)

            let paused = try await service.create(["url": service.testdata("/testdata/1M"), "paused": true])["id"] as! String
            let before = try await service.job(paused)
            for (body, field) in [
                (["state": "running"], "state"), (["connections": 0], "connections"), (["limitRate": 0], "limitRate"),
                (["priority": "high"], "priority"), (["filename": "a/b"], "filename"),
            ] as [([String: Any], String)] {
                let reply = try await service.send(.patch, "/jobs/\(paused)", body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorField == field, "\(body)")
            }
            var after = try await service.job(paused)
            after["updatedAt"] = before["updatedAt"]
            #expect(NSDictionary(dictionary: after) == NSDictionary(dictionary: before))
            #expect(try await service.send(.patch, "/jobs/nope", ["priority": 1]).status == 404)
        }
    }
}
