import Foundation
import SluiceTestSupport
import Testing

/// The schedule against the binary, its wall clock moved with Debian's faketime (CONTRACT.md
/// §7, "State, not edges"): a service started inside a rule is limited at once, one started
/// seconds before a boundary changes within a second of it, and a window that closes sends
/// its running job back to `queued` with its bytes. The clock is faked at a date, not stepped.
@Suite(.enabled(if: ChildProcess.fakedClockShim != nil, "faketime is not installed here (scripts/faketime.sh installs it)"))
struct FakedClockScheduleTests {
    static let rate = 262_144
    static let fileSize = 8 << 20

    @Test func aServiceStartedInsideARuleIsLimitedAtOnce() async throws {
        let rule = #"{"days":["sun"],"from":"09:00","to":"11:00","limitRate":\#(Self.rate)}"#
        try await FakedService.with(clock: "@2027-03-28 10:00:00", rules: rule) { service in
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
        try await FakedService.with(clock: "@2027-03-28 01:59:52", rules: rule) { service in
            let delay = try await service.boundaryDelay(after: 8) { queue in
                queue["limitRate"] as? Int == Self.rate
            }
            #expect(delay < .seconds(1), "applied \(delay) after the boundary")
        }
    }

    @Test func aClosingWindowSendsTheRunningJobBackWithItsBytes() async throws {
        let rule = #"{"days":["sun"],"from":"02:00","to":"03:00","run":false}"#
        try await FakedService.with(clock: "@2027-03-28 01:59:50", rules: rule) { service in
            let id = try await service.create(#"{"url":"\#(service.url)/files/big.bin","limitRate":\#(Self.rate)}"#)
            let delay = try await service.boundaryDelay(after: 10) { queue in
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

    /// The boundary's delay over 20 boundaries, each in a service started 8 s before its
    /// boundary (bench/RESULTS.md, issue 38): `SLUICE_BENCH=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SLUICE_BENCH"] == "1"))
    func benchTheBoundaryDelayOverTwentyBoundaries() async throws {
        var delays: [Duration] = []
        for hour in 0..<20 {
            let from = String(format: "%02d:00", hour + 2)
            let to = String(format: "%02d:00", hour + 3)
            let rule = #"{"days":["sun"],"from":"\#(from)","to":"\#(to)","limitRate":\#(Self.rate)}"#
            try await FakedService.with(clock: "@2027-03-28 \(String(format: "%02d", hour + 1)):59:52", rules: rule) { service in
                delays.append(try await service.boundaryDelay(after: 8) { $0["limitRate"] as? Int == Self.rate })
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
    /// Just before the process was started.
    let launched: ContinuousClock.Instant

    static func with(clock: String, rules: String, _ body: (FakedService) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let root = directory.path + "/root"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try Data((0..<FakedClockScheduleTests.fileSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
                .write(to: URL(fileURLWithPath: root + "/big.bin"))
            let schedule = directory.path + "/schedule.json"
            try #"{"timeZone":"UTC","rules":[\#(rules)]}"#.write(toFile: schedule, atomically: true, encoding: .utf8)
            let launched = ContinuousClock.now
            let serve = try ChildProcess(
                arguments: [
                    "serve", "--port", "0", "--data", directory.path + "/data", "--origin-root", root, "--schedule", schedule,
                ], fakedClock: clock)
            let line = try await serve.waitForLine(containing: "listening on http://127.0.0.1:")
            let url = String(line[line.range(of: "http://")!.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
            let service = FakedService(url: url, port: Int(url.split(separator: ":").last!)!, launched: launched)
            do {
                try await body(service)
            } catch {
                serve.signal(SIGKILL)
                _ = try? await serve.finish(timeout: .seconds(10))
                throw error
            }
            serve.signal(SIGTERM)
            let (status, _, stderr) = try await serve.finish(timeout: .seconds(30))
            #expect(status == 0, "\(stderr.suffix(2000))")
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

    /// How long after the faked clock reached the boundary `seconds` past its start `/queue`
    /// first showed `applied`, read every 20 ms. The faked clock starts at its date as the
    /// process loads, just after `launched`: the boundary's instant is read from the launch, a
    /// few milliseconds early at most (the delay is overstated by as much). Fails if it shows
    /// it before the boundary.
    func boundaryDelay(after seconds: Int, applied: ([String: Any]) -> Bool) async throws -> Duration {
        let boundary = launched + .seconds(seconds)
        while ContinuousClock.now < boundary + .seconds(30) {
            let queue = try await json("/queue")
            let now = ContinuousClock.now
            if applied(queue) {
                guard now >= boundary else {
                    throw RawHTTPClient.Failure(description: "applied \(boundary - now) before the boundary: \(queue)")
                }
                return now - boundary
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw RawHTTPClient.Failure(description: "not applied within 30 s of the boundary")
    }
}
