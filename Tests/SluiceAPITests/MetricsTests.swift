import Foundation
import SluiceTestSupport
import Testing

/// `/metrics` on the real engine and origin: the bytes a download fetched and the origin
/// served, and the per-host connection series.
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
