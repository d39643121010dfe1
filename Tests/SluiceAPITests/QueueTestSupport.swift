import Foundation
import NIOHTTP1
import SluiceTestSupport

extension ServiceHarness {
    /// Sends `fields` as JSON with `method` and returns the reply.
    func send(_ method: HTTPMethod, _ path: String, _ fields: Any) async throws -> Reply {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        return try await request(method, path, json: body)
    }

    /// Every job's state, by id.
    func states() async throws -> [String: String] {
        let jobs = try await request(.GET, "/jobs?limit=1000").json()["jobs"] as! [[String: Any]]
        return Dictionary(uniqueKeysWithValues: jobs.map { ($0["id"] as! String, $0["state"] as! String) })
    }

    /// How many jobs run now, by `GET /queue`.
    func runningCount() async throws -> Int {
        let queue = try await request(.GET, "/queue").json()
        return (queue["counts"] as! [String: Any])["running"] as! Int
    }

    /// Polls `condition` until it holds, failing after the deadline.
    func eventually(
        _ what: String, timeout: Duration = .seconds(30), _ condition: @Sendable () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw RawHTTPClient.Failure(description: "never: \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A running job's speed: the time it takes to fetch the next `bytes` bytes (no window of
    /// fixed length), counted from its first progress report after the call (an older count,
    /// late under load, put bytes fetched before a change of rate into the measure); and the
    /// job at the end of it.
    func measuredRate(of id: String, bytes: Int = 1 << 20) async throws -> (bytesPerSecond: Double, job: [String: Any]) {
        let seen = try await job(id)["bytesDone"] as? Int ?? 0
        let start = try await waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > seen }["bytesDone"] as! Int
        let clock = ContinuousClock()
        let began = clock.now
        let later = try await waitFor(id) { ($0["bytesDone"] as? Int ?? 0) >= start + bytes }
        let elapsed = (clock.now - began) / .seconds(1)
        return (Double((later["bytesDone"] as! Int) - start) / elapsed, later)
    }

    /// `sluice_origin_bytes_served_total`: every byte the origin has sent.
    func originBytesServed() async throws -> Int {
        let text = String(decoding: try await request(.GET, "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("sluice_origin_bytes_served_total ") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0
    }
}

extension JSONReply {
    /// `error.field` of an error body.
    var errorField: String? { ((try? json())?["error"] as? [String: Any])?["field"] as? String }
}
