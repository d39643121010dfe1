import Foundation
import HTTPTypes
import SluiceCore
import Testing

/// `POST /jobs/batch`, in process: many jobs in one request, all or none, a refused one named
/// by its place.
@Suite struct BatchCreateAPITests {
    @Test func aBatchMakesEveryJobInItsOrder() async throws {
        try await RouterHarness.with { service in
            _ = try await service.request(.patch, "/queue", json: #"{"paused": true}"#)
            let body =
                #"{"jobs": [{"url": "http://127.0.0.1:9/a"}, {"url": "http://127.0.0.1:9/b", "paused": true, "filename": "b.iso"}, {"url": "http://127.0.0.1:9/c", "priority": 5}]}"#
            let reply = try await service.request(.post, "/jobs/batch", json: body)
            #expect(reply.status == 201)
            let jobs = try #require(try reply.json()["jobs"] as? [[String: Any]])
            #expect(jobs.map { $0["url"] as? String } == ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b", "http://127.0.0.1:9/c"])
            #expect(jobs.map { $0["state"] as? String } == ["queued", "paused", "queued"])
            #expect(jobs[1]["filename"] as? String == "b.iso")
            #expect(jobs[2]["priority"] as? Int == 5)
            let listed = try #require(try await service.request(.get, "/jobs").json()["jobs"] as? [[String: Any]])
            #expect(listed.count == 3)
            let counts = try #require(try await service.request(.get, "/queue").json()["counts"] as? [String: Int])
            #expect(counts["queued"] == 2 && counts["paused"] == 1)
        }
    }

    @Test(arguments: [
        (#"{"jobs": [{"url": "http://x/a"}, {"url": "ftp://x/b"}]}"#, "unsupported_scheme", "jobs[1].url"),
        (#"{"jobs": [{"url": "http://x/a"}, {"url": "http://x/b", "filename": "../b"}]}"#, "invalid_filename", "jobs[1].filename"),
        (#"{"jobs": [{"url": "http://x/a", "filname": "b"}]}"#, "invalid_field", "jobs[0].filname"),
        (#"{"jobs": [{"url": "http://x/a"}, 5]}"#, "invalid_field", "jobs[1]"),
        (#"{"jobs": []}"#, "invalid_field", "jobs"),
        (#"{"jobs": {"url": "http://x/a"}}"#, "invalid_field", "jobs"),
        (#"{}"#, "invalid_field", "jobs"),
        (#"{"jobs": [{"url": "http://x/a"}], "paused": true}"#, "invalid_field", "paused"),
        (#"[{"url": "http://x/a"}]"#, "invalid_json", nil),
    ])
    func aRefusedBatchNamesItsPlaceAndMakesNothing(body: String, code: String, field: String?) async throws {
        try await RouterHarness.with { service in
            let reply = try await service.request(.post, "/jobs/batch", json: body)
            #expect(reply.status == 400)
            #expect(reply.errorCode == code)
            let error = try #require(try reply.json()["error"] as? [String: Any])
            #expect(error["field"] as? String == field)
            let jobs = try await service.request(.get, "/jobs").json()["jobs"] as? [Any]
            #expect(jobs?.isEmpty == true)
        }
    }

    @Test func moreThanAThousandJobsAreRefused() async throws {
        try await RouterHarness.with { service in
            let one = #"{"url":"http://x/a"}"#
            let body = #"{"jobs":["# + Array(repeating: one, count: 1001).joined(separator: ",") + "]}"
            let reply = try await service.request(.post, "/jobs/batch", json: body)
            #expect(reply.status == 400)
            #expect(reply.errorCode == "invalid_field")
            let thousand = #"{"jobs":["# + Array(repeating: one, count: 1000).joined(separator: ",") + "]}"
            _ = try await service.request(.patch, "/queue", json: #"{"paused": true}"#)
            #expect(try await service.request(.post, "/jobs/batch", json: thousand).status == 201)
            let counts = try #require(try await service.request(.get, "/queue").json()["counts"] as? [String: Int])
            #expect(counts["queued"] == 1000)
        }
    }

    @Test func anIdempotencyKeyIsRefusedNotIgnored() async throws {
        try await RouterHarness.with { service in
            let reply = try await service.request(
                .post, "/jobs/batch", json: #"{"jobs":[{"url":"http://x/a"}]}"#, headers: ["Idempotency-Key": "once"])
            #expect(reply.status == 400)
            #expect(reply.errorField == "Idempotency-Key")
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func onlyPostIsAnswered() async throws {
        try await RouterHarness.with { service in
            let reply = try await service.request(.get, "/jobs/batch")
            #expect(reply.status == 405)
            #expect(reply.headers[.allow] == "POST")
        }
    }
}
