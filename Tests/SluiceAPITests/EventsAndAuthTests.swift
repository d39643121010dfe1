import Foundation
import NIOCore
import SluiceTestSupport
import Testing

@Suite struct EventsTests {
    @Test func snapshotOnConnectThenChangesProgressAndRemoval() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let existing = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String
            let response = try await service.stream("/events")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/event-stream")
            var reader = EventReader(response)
            let first = try #require(try await reader.next())
            #expect(first.event == "job")
            #expect(first.data["id"] as? String == existing)

            let id = try await service.create(["url": service.testdata("/testdata/4M?rate=1M"), "connections": 2])["id"] as! String
            let clock = ContinuousClock()
            let start = clock.now
            var progressTimes: [ContinuousClock.Instant] = []
            var lastBytes = 0
            _ = try await reader.until { event, data in
                guard event == "job", data["id"] as? String == id else { return false }
                let bytes = data["bytesDone"] as? Int ?? 0
                #expect(bytes >= lastBytes, "bytesDone went back")
                if bytes > lastBytes, data["state"] as? String == "running" { progressTimes.append(clock.now) }
                lastBytes = bytes
                return data["state"] as? String == "completed"
            }
            // About 2 s of transfer: several progress events, but at most one per 250 ms.
            let elapsed = (clock.now - start) / .milliseconds(250)
            #expect(progressTimes.count >= 3)
            #expect(Double(progressTimes.count) <= elapsed + 2)
            _ = try await service.request(.delete, "/jobs/\(existing)")
            let removed = try await reader.until { event, _ in event == "removed" }
            #expect(removed.data["id"] as? String == existing)
        }
    }

    @Test func oneJobsStream() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let other = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String
            let id = try await service.create(["url": service.testdata("/testdata/1K?seed=3"), "paused": true])["id"] as! String
            var reader = EventReader(try await service.stream("/jobs/\(id)/events"))
            #expect(try await reader.next()?.data["id"] as? String == id)
            _ = try await service.request(.post, "/jobs/\(other)/resume")
            _ = try await service.request(.post, "/jobs/\(id)/resume")
            let done = try await reader.until { _, data in data["state"] as? String == "completed" }
            #expect(done.data["id"] as? String == id)
            _ = try await service.request(.delete, "/jobs/\(id)")
            let removed = try await reader.until { event, _ in event == "removed" }
            #expect(removed.data["id"] as? String == id)
            // The stream of a removed job ends.
            #expect(try await reader.next() == nil)
        }
    }
}

@Suite struct AuthTests {
    @Test func eventStreamsAcceptAQueryToken() async throws {
        try await RouterHarness.with(token: "s3cret") { (service: RouterHarness) async throws in
            let ok = try await service.stream("/events?access_token=s3cret", authorized: false)
            #expect(ok.status == 200)
            let bad = try await service.stream("/events?access_token=nope", authorized: false)
            #expect(bad.status == 401)
            let notForJobs = try await service.request(.get, "/jobs?access_token=s3cret", authorized: false)
            #expect(notForJobs.status == 401)
        }
    }
}
