import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// The schedule against the binary, its wall clock moved with Debian's faketime (CONTRACT.md
/// §7, "State, not edges"): a service started inside a rule is limited at once, one started
/// seconds before a boundary changes within a second of it, and a window that closes sends
/// its running job back to `queued` with its bytes. The clock runs a fixed offset ahead of
/// the real one (`faketime -f +SECONDS`), so the boundary's real instant is known exactly,
/// however long the process took to start.
@Suite(.enabled(if: ChildProcess.fakedClockShim != nil, "faketime is not installed here (scripts/faketime.sh installs it)"))
struct FakedClockScheduleTests {
    static let rate = 262_144
    static let fileSize = 8 << 20

    @Test func aServiceStartedInsideARuleIsLimitedAtOnce() async throws {
        let rule = #"{"days":["sun"],"from":"09:00","to":"11:00","limitRate":\#(Self.rate)}"#
        try await FakedService.with(clock: "2027-03-28T10:00:00Z", rules: rule) { service in
            let queue = try await service.json("/queue")
            #expect(queue["limitRate"] as? Int == Self.rate, "\(queue)")
            #expect((queue["setBy"] as? [String: Any])?["limitRate"] as? String == "rules[0]", "\(queue)")
            let id = try await service.create(#"{"url":"\#(service.url)/files/big.bin"}"#)
            let started = ContinuousClock.now
            try await Task.sleep(for: .seconds(3))
            let job = try await service.json("/jobs/\(id)")
            let seconds = Double((ContinuousClock.now - started).components.seconds) + 1
            let done = job["bytesDone"] as? Int ?? 0
            // Unlimited, 8 MiB from the service's own origin take well under a second. A
            // limiter's first buffer (1 MiB) goes at once.
            #expect(job["state"] as? String == "running", "\(job)")
            #expect(done > 0 && done <= Int(Double(Self.rate) * seconds) + (1 << 20), "\(done) bytes in \(seconds) s")
        }
    }

    @Test func aBoundarySecondsAfterTheStartAppliesWithinASecond() async throws {
        let rule = #"{"days":["sun"],"from":"02:00","to":"03:00","limitRate":\#(Self.rate)}"#
        try await FakedService.with(clock: "2027-03-28T01:59:48Z", rules: rule) { service in
            let delay = try await service.boundaryDelay(at: "2027-03-28T02:00:00Z") { queue in
                queue["limitRate"] as? Int == Self.rate
            }
            #expect(delay < .seconds(1), "applied \(delay) after the boundary")
        }
    }

    @Test func aClosingWindowSendsTheRunningJobBackWithItsBytes() async throws {
        let rule = #"{"days":["sun"],"from":"02:00","to":"03:00","run":false}"#
        try await FakedService.with(clock: "2027-03-28T01:59:48Z", rules: rule) { service in
            let id = try await service.create(#"{"url":"\#(service.url)/files/big.bin","limitRate":\#(Self.rate)}"#)
            let delay = try await service.boundaryDelay(at: "2027-03-28T02:00:00Z") { queue in
                queue["run"] as? Bool == false
            }
            #expect(delay < .seconds(1), "applied \(delay) after the boundary")
            var job: [String: Any] = [:]
            let deadline = ContinuousClock.now + .seconds(10)
            repeat {
                job = try await service.json("/jobs/\(id)")
                if job["state"] as? String == "queued" { break }
                try await Task.sleep(for: .milliseconds(50))
            } while ContinuousClock.now < deadline
            #expect(job["state"] as? String == "queued", "\(job)")
            #expect(job["heldBy"] as? String == "window", "\(job)")
            let kept = job["bytesDone"] as? Int ?? 0
            #expect(kept > 0 && kept < Self.fileSize, "\(job)")
            // Held: nothing more is fetched, and nothing fetched is given up.
            try await Task.sleep(for: .milliseconds(1500))
            let later = try await service.json("/jobs/\(id)")
            #expect(later["state"] as? String == "queued" && later["bytesDone"] as? Int == kept, "\(later)")
        }
    }

    /// The boundary's delay over 20 boundaries, each in a service started 12 s before its
    /// boundary (bench/RESULTS.md, issue 38): `SLUICE_BENCH=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SLUICE_BENCH"] == "1"))
    func benchTheBoundaryDelayOverTwentyBoundaries() async throws {
        var delays: [Duration] = []
        for hour in 0..<20 {
            let from = String(format: "%02d:00", hour + 2)
            let to = String(format: "%02d:00", hour + 3)
            let rule = #"{"days":["sun"],"from":"\#(from)","to":"\#(to)","limitRate":\#(Self.rate)}"#
            try await FakedService.with(clock: "2027-03-28T\(String(format: "%02d", hour + 1)):59:48Z", rules: rule) { service in
                delays.append(try await service.boundaryDelay(at: "2027-03-28T\(from):00Z") { $0["limitRate"] as? Int == Self.rate })
            }
        }
        let sorted = delays.sorted()
        print("boundary delay over \(delays.count) boundaries: max \(sorted.last!), median \(sorted[sorted.count / 2])")
        #expect(sorted.last! < .seconds(1))
    }
}

/// `sluice serve` under a faked wall clock, its schedule in UTC, an 8 MiB file in its origin.
struct FakedService {
    let url: String
    let port: Int
    /// How far the service's wall clock runs ahead of this process's, in whole seconds.
    let offset: Int

    /// A service whose wall clock reads about `clock` (RFC 3339) as it starts.
    static func with(clock: String, rules: String, _ body: (FakedService) async throws -> Void) async throws {
        let offset = Int(try #require(RFC3339.date(clock)).timeIntervalSinceNow.rounded())
        try await withTemporaryDirectory { directory in
            let root = directory.path + "/root"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try Data((0..<FakedClockScheduleTests.fileSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
                .write(to: URL(fileURLWithPath: root + "/big.bin"))
            let schedule = directory.path + "/schedule.json"
            try #"{"timeZone":"UTC","rules":[\#(rules)]}"#.write(toFile: schedule, atomically: true, encoding: .utf8)
            try await ChildProcess.serving(
                data: directory.path + "/data", ["--origin-root", root, "--schedule", schedule],
                fakedClock: offset >= 0 ? "+\(offset)" : "\(offset)",
                exited: { status, stderr in #expect(status == 0, "\(stderr.suffix(2000))") }
            ) { url in
                try await body(FakedService(url: url, port: Int(url.split(separator: ":").last!)!, offset: offset))
            }
        }
    }

    func json(_ path: String) async throws -> [String: Any] {
        let reply = try await RawHTTPClient.request(port: port, path: path)
        guard reply.status == 200, let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any] else {
            throw RawHTTPClient.Failure(description: "GET \(path): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        return object
    }

    func create(_ body: String) async throws -> String {
        let reply = try await RawHTTPClient.request(
            port: port, method: "POST", path: "/jobs", headers: ["Content-Type": "application/json"], body: body)
        let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any]
        guard reply.status == 201, let id = object?["id"] as? String else {
            throw RawHTTPClient.Failure(description: "POST /jobs: \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        return id
    }

    /// How long after the service's clock reached `boundary` (RFC 3339) `/queue` first showed
    /// `applied`, read every 20 ms (to within a poll's round trip). Fails if the service was
    /// not answering before the boundary, or shows it before.
    func boundaryDelay(at boundary: String, applied: ([String: Any]) -> Bool) async throws -> Duration {
        // The boundary on this process's (real) wall clock.
        let real = try #require(RFC3339.date(boundary)).addingTimeInterval(-Double(offset))
        let before = try await json("/queue")
        guard Date() < real, !applied(before) else {
            throw RawHTTPClient.Failure(description: "the service answered only \(Date().timeIntervalSince(real)) s after the boundary")
        }
        while Date() < real.addingTimeInterval(30) {
            let queue = try await json("/queue")
            let now = Date()
            if applied(queue) {
                guard now >= real else {
                    throw RawHTTPClient.Failure(description: "applied \(real.timeIntervalSince(now)) s before the boundary")
                }
                return .milliseconds(Int64((now.timeIntervalSince(real) * 1000).rounded()))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw RawHTTPClient.Failure(description: "not applied within 30 s of the boundary")
    }
}
