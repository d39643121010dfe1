import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SluiceTestSupport
import Testing

/// Reads Server-Sent Events from a live stream.
struct EventReader {
    var iterator: HTTPClientResponse.Body.AsyncIterator
    var buffer = ""
    /// The `id:` of the last event read.
    var lastID: String?

    init(_ response: HTTPClientResponse) {
        iterator = response.body.makeAsyncIterator()
    }

    /// The next event: its type and data.
    mutating func next() async throws -> (event: String, data: [String: Any])? {
        while true {
            if let range = buffer.range(of: "\n\n") {
                let frame = buffer[..<range.lowerBound]
                buffer.removeSubrange(..<range.upperBound)
                var event = "message"
                var data = ""
                for line in frame.split(separator: "\n") {
                    if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                    if line.hasPrefix("id: ") { lastID = String(line.dropFirst(4)) }
                }
                guard !data.isEmpty else { continue }
                let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] ?? [:]
                return (event, object)
            }
            guard let chunk = try await iterator.next() else { return nil }
            buffer += String(buffer: chunk)
        }
    }

    /// Reads events until one satisfies `condition`.
    mutating func until(_ condition: (String, [String: Any]) -> Bool) async throws -> (event: String, data: [String: Any]) {
        while let event = try await next() {
            if condition(event.event, event.data) { return event }
        }
        throw RawHTTPClient.Failure(description: "stream ended")
    }
}

extension ServiceHarness {
    func events(
        _ path: String, query: String = "", authorized: Bool = true, lastEventID: String? = nil
    ) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: base + path + query)
        if authorized, let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        return try await client.execute(request, timeout: .seconds(30))
    }
}

@Suite struct EventsTests {
    @Test func snapshotOnConnectThenChangesProgressAndRemoval() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let existing = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String
            let response = try await service.events("/events")
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type") == "text/event-stream")
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
            _ = try await service.request(.DELETE, "/jobs/\(existing)")
            let removed = try await reader.until { event, _ in event == "removed" }
            #expect(removed.data["id"] as? String == existing)
        }
    }

    @Test func oneJobsStream() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let other = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String
            let id = try await service.create(["url": service.testdata("/testdata/1K?seed=3"), "paused": true])["id"] as! String
            var reader = EventReader(try await service.events("/jobs/\(id)/events"))
            #expect(try await reader.next()?.data["id"] as? String == id)
            _ = try await service.request(.POST, "/jobs/\(other)/resume")
            _ = try await service.request(.POST, "/jobs/\(id)/resume")
            let done = try await reader.until { _, data in data["state"] as? String == "completed" }
            #expect(done.data["id"] as? String == id)
            _ = try await service.request(.DELETE, "/jobs/\(id)")
            let removed = try await reader.until { event, _ in event == "removed" }
            #expect(removed.data["id"] as? String == id)
            // The stream of a removed job ends.
            #expect(try await reader.next() == nil)
        }
    }
}

@Suite struct AuthTests {
    @Test func eventStreamsAcceptAQueryToken() async throws {
        try await ServiceHarness.with(token: "s3cret") { (service: ServiceHarness) async throws in
            let ok = try await service.events("/events", query: "?access_token=s3cret", authorized: false)
            #expect(ok.status == .ok)
            let bad = try await service.events("/events", query: "?access_token=nope", authorized: false)
            #expect(bad.status == .unauthorized)
            let notForJobs = try await service.request(.GET, "/jobs?access_token=s3cret", authorized: false)
            #expect(notForJobs.status == 401)
        }
    }
}

@Suite struct MetricsTests {
    @Test func reportsJobsBytesAndRequestDurations() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let id = try await service.create(["url": service.testdata("/testdata/2M")])["id"] as! String
            try await service.waitFor(id) { $0["state"] as? String == "completed" }
            let reply = try await service.request(.GET, "/metrics")
            #expect(reply.status == 200)
            let text = String(decoding: reply.body, as: UTF8.self)
            #expect(text.contains(#"sluice_jobs{state="completed"} 1"#))
            #expect(text.contains("sluice_downloaded_bytes_total 2097152"))
            let served = text.split(separator: "\n").first { $0.hasPrefix("sluice_origin_bytes_served_total ") }
            #expect((served?.split(separator: " ").last).flatMap { Int($0) }.map { $0 >= 2_097_152 } == true)
            #expect(text.contains(#"sluice_http_request_duration_seconds_count{method="POST",route="/jobs",status="201"} 1"#))
        }
    }

    /// Issue 21: `sluice_host_connections{host}` stayed at 0 for every host ever contacted.
    /// After jobs to 60 hosts have ended, no series of a host without connections is left.
    @Test func hostSeriesGoWhenTheirConnectionsDo() async throws {
        try await ServiceHarness.with(maxActive: 16) { (service: ServiceHarness) async throws in
            var ids: [String] = []
            for index in 1...60 {
                // Loopback addresses nothing listens on: each job connects, fails and ends.
                let url = "http://127.0.0.\(index + 1):1/x"
                ids.append(try await service.create(["url": url, "connections": 1])["id"] as! String)
            }
            for id in ids { try await service.waitFor(id) { $0["state"] as? String == "failed" } }
            try await service.eventually("every host's series has gone") {
                let text = String(decoding: try await service.request(.GET, "/metrics").body, as: UTF8.self)
                return text.split(separator: "\n").filter { $0.hasPrefix("sluice_host_connections{") }.count <= 16
            }
            let text = String(decoding: try await service.request(.GET, "/metrics").body, as: UTF8.self)
            let left = text.split(separator: "\n").filter { $0.hasPrefix("sluice_host_connections{") }
            #expect(left.allSatisfy { !$0.hasSuffix(" 0") }, "\(left)")
        }
    }
}
