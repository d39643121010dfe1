import Foundation
import NIOHTTP1
import SluiceTestSupport

extension APIHarness {
    /// A running job's speed: the time it takes to fetch the next `bytes` bytes (no window of
    /// fixed length), counted from its second progress report after the call; and the job at
    /// the end of it. Not the first: the report may be older than the change of rate, and the
    /// first read buffer under a new rate goes at once (a limiter starts from now), so a
    /// window from there measured one 1 MiB buffer in 0.26 s under a 1 MiB/s limit (CI, under
    /// load). Two buffers past that are paced whatever came before.
    func measuredRate(of id: String, bytes: Int = 2 << 20) async throws -> (bytesPerSecond: Double, job: [String: Any]) {
        let seen = try await job(id)["bytesDone"] as? Int ?? 0
        let changed = try await waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > seen }["bytesDone"] as! Int
        let start = try await waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > changed }["bytesDone"] as! Int
        let clock = ContinuousClock()
        let began = clock.now
        let later = try await waitFor(id) { ($0["bytesDone"] as? Int ?? 0) >= start + bytes }
        let elapsed = (clock.now - began) / .seconds(1)
        return (Double((later["bytesDone"] as! Int) - start) / elapsed, later)
    }

}

extension ServiceHarness {
    /// `sluice_origin_bytes_served_total`: every byte the origin has sent.
    func originBytesServed() async throws -> Int {
        let text = String(decoding: try await request(.GET, "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("sluice_origin_bytes_served_total ") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0
    }
}
