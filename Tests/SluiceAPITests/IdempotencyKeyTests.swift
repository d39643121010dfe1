import Foundation
import SluiceTestSupport
import Testing

/// `POST /jobs` with an `Idempotency-Key`: the same request answers the job it made, another
/// request under the key is refused (422). In process (`RouterHarness`).
@Suite struct IdempotencyKeyTests {
    @Test func anIdempotencyKeyReturnsTheFirstJob() async throws {
        try await RouterHarness.with { service in
            let body = String(
                decoding: try JSONSerialization.data(withJSONObject: ["url": service.testdata("/testdata/1M"), "paused": true]),
                as: UTF8.self)
            let first = try await service.request(.post, "/jobs", json: body, headers: ["Idempotency-Key": "nightly-42"])
            #expect(first.status == 201)
            #expect(first.header("Idempotent-Replayed") == nil)
            let again = try await service.request(.post, "/jobs", json: body, headers: ["Idempotency-Key": "nightly-42"])
            #expect(again.status == 200)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(try again.json()["id"] as? String == (try first.json()["id"] as? String))
            let other = try await service.request(.post, "/jobs", json: body, headers: ["Idempotency-Key": "nightly-43"])
            #expect(other.status == 201)
            let bad = try await service.request(.post, "/jobs", json: body, headers: ["Idempotency-Key": "has space"])
            #expect(bad.status == 400)
            #expect(bad.errorField == "Idempotency-Key")
            #expect(try await service.states().count == 2)
        }
    }

    /// Issue 21: a key sent again with another URL answered 200 with the first job. A
    /// different request under the same key is refused (422, as the IETF draft and Stripe
    /// say) and changes nothing; the same request spelt differently (key order, spacing, a
    /// default spelt out) is the same request.
    @Test func anIdempotencyKeyWithADifferentRequestIsRefused() async throws {
        try await RouterHarness.with { service in
            let url = service.testdata("/testdata/1M")
            let first = try await service.request(
                .post, "/jobs", json: #"{"url":"\#(url)","paused":true}"#, headers: ["Idempotency-Key": "k-1"])
            #expect(first.status == 201)
            let same = try await service.request(
                .post, "/jobs", json: #"{ "paused": true, "connections": 4, "url": "\#(url)" }"#, headers: ["Idempotency-Key": "k-1"])
            #expect(same.status == 200)
            #expect(try same.json()["id"] as? String == (try first.json()["id"] as? String))
            for changed in [
                #"{"url":"\#(service.testdata("/testdata/2M"))","paused":true}"#, #"{"url":"\#(url)","paused":true,"priority":1}"#,
                #"{"url":"\#(url)"}"#, #"{"url":"\#(url)","paused":true,"dir":"b"}"#,
                #"{"url":"\#(url)","paused":true,"startAt":"2030-01-01T00:00:00Z"}"#,
                #"{"url":"\#(url)","paused":true,"ignoreSchedule":true}"#,
                #"{"url":"\#(url)","paused":true,"checksumUrl":"http://127.0.0.1:9/SUMS"}"#,
                #"{"url":"\#(url)","paused":true,"mirrors":["http://127.0.0.1:9/m"]}"#,
            ] {
                let refused = try await service.request(.post, "/jobs", json: changed, headers: ["Idempotency-Key": "k-1"])
                #expect(refused.status == 422, "\(changed)")
                #expect(refused.errorCode == "idempotency_key_reused", "\(changed)")
                #expect(refused.errorField == "Idempotency-Key")
            }
            #expect(try await service.states().count == 1)
        }
    }
}
