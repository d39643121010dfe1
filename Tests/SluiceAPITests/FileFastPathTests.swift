import Crypto
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing
import NIOHTTP1
import SluiceAPI

/// `/files/` answered on the event loop with sendfile (`FileFastPathHandler`), ahead of the
/// router: the same answers, in order, under the same checks, and never a stale or escaped
/// file from its open-file cache.
@Suite struct FileFastPathTests {
    static let content = Array((0..<(300 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Requests sent in one write on one connection, the last closing it; the answers
    /// parsed one after another by their Content-Length.
    static func pipelined(port: Int, _ requests: [(path: String, headers: [String: String])]) async throws -> [RawHTTPResponse] {
        var text = ""
        for (index, request) in requests.enumerated() {
            text += "GET \(request.path) HTTP/1.1\r\n"
            if request.headers["Host"] == nil { text += "Host: 127.0.0.1:\(port)\r\n" }
            for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
            if index == requests.count - 1 { text += "Connection: close\r\n" }
            text += "\r\n"
        }
        var raw = try await RawHTTPClient.exchange(port: port, request: Array(text.utf8))[...]
        var answers: [RawHTTPResponse] = []
        while !raw.isEmpty {
            guard let headEnd = raw.firstRange(of: [13, 10, 13, 10]) else { throw RawHTTPClient.Failure(description: "no head") }
            let head = try RawHTTPClient.parse(Array(raw[..<headEnd.upperBound]), isHead: true)
            let length = head.header("Content-Length").flatMap(Int.init) ?? 0
            let bodyEnd = headEnd.upperBound + length
            guard bodyEnd <= raw.endIndex else { throw RawHTTPClient.Failure(description: "a body was cut short") }
            answers.append(try RawHTTPClient.parse(Array(raw[raw.startIndex..<bodyEnd]), isHead: false))
            raw = raw[bodyEnd...]
        }
        return answers
    }

    static func fastAnswers(_ harness: ServiceHarness) async throws -> Double {
        let text = String(decoding: try await harness.request(.GET, "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("sluice_origin_sendfile_responses_total ") }
        return line.flatMap { Double($0.split(separator: " ")[1]) } ?? 0
    }

    @Test func pipelinedAnswersKeepTheirOrderWhicheverPathAnswers() async throws {
        try await ServiceHarness.with { harness in
            try Self.write(Self.content, to: harness.data + "/documents/a.bin")
            let first = try await harness.request(.GET, "/files/a.bin")
            let etag = try #require(first.headers.first(name: "ETag"))
            let before = try await Self.fastAnswers(harness)
            let answers = try await Self.pipelined(
                port: harness.port,
                [
                    ("/files/a.bin", ["Range": "bytes=10-19"]),  // fast
                    ("/jobs", [:]),  // router
                    ("/files/a.bin", [:]),  // fast (the router was done)
                    ("/files/a.bin", ["If-None-Match": etag]),  // 304 from the router
                    ("/files/a.bin", ["Range": "bytes=0-1,5-6"]),  // multipart from the router
                    ("/files/a.bin", ["Range": "bytes=-5"]),  // fast
                    ("/files/missing", [:]),  // 404 from the router
                    ("/files/a.bin", ["Range": "bytes=999999-"]),  // 416 from the router
                    ("/healthz", [:]),
                ])
            #expect(answers.map(\.status) == [206, 200, 200, 304, 206, 206, 404, 416, 200])
            #expect(answers[0].body == Array(Self.content[10..<20]))
            #expect(answers[0].header("Content-Range") == "bytes 10-19/\(Self.content.count)")
            #expect(answers[1].header("Content-Type") == "application/json")
            #expect(answers[2].body == Self.content)
            #expect(answers[4].header("Content-Type")?.hasPrefix("multipart/byteranges") == true)
            #expect(answers[5].body == Array(Self.content.suffix(5)))
            // The same headers as the router's answer, and the service's own.
            for fast in [answers[0], answers[2], answers[5]] {
                #expect(fast.header("ETag") == etag)
                #expect(fast.header("X-Content-Type-Options") == "nosniff")
                #expect(fast.header("Content-Security-Policy") == "sandbox")
                #expect(fast.header("Server") == "sluice")
                #expect(fast.header("Date") != nil)
                #expect(fast.header("Accept-Ranges") == "bytes")
            }
            // Only the first: from the second on, the router is still answering an earlier
            // request when the next is read, so it answers the rest in order.
            #expect(try await Self.fastAnswers(harness) - before == 1)
            // One at a time on a keep-alive connection, the fast path answers each; a query
            // string names the same file, as on the router.
            let again = try await Self.pipelined(port: harness.port, [("/files/a.bin?v=1", [:])])
            #expect(again[0].body == Self.content)
            #expect(try await Self.fastAnswers(harness) - before == 2)
        }
    }

    @Test func aFileChangedOrMovedOutOfTheRootIsNeverServedFromTheCache() async throws {
        try await ServiceHarness.with { harness in
            let path = harness.data + "/documents/c.bin"
            try Self.write(Self.content, to: path)
            let first = try await Self.pipelined(port: harness.port, [("/files/c.bin", [:]), ("/files/c.bin", ["Range": "bytes=0-3"])])
            #expect(first.map(\.status) == [200, 206])
            // Replaced by another file (a new inode): the new bytes and a new tag.
            let replacement = Array(Self.content.reversed())
            try Self.write(replacement, to: path + ".new")
            #expect(rename(path + ".new", path) == 0)
            let second = try await Self.pipelined(port: harness.port, [("/files/c.bin", [:])])
            #expect(second[0].body == replacement)
            #expect(second[0].header("ETag") != first[0].header("ETag"))
            // Replaced by a link to a file outside the root: refused, as without the cache.
            let outside = harness.data + "/secret"
            try Self.write(Array("secret".utf8), to: outside)
            #expect(unlink(path) == 0)
            #expect(symlink(outside, path) == 0)
            let third = try await Self.pipelined(port: harness.port, [("/files/c.bin", [:]), ("/files/c.bin", ["Range": "bytes=0-1"])])
            #expect(third.map(\.status) == [404, 404])
            #expect(third.allSatisfy { !$0.body.starts(with: Array("se".utf8)) })
        }
    }

    @Test func withATokenOnlyAnAuthorizedRequestIsAnswered() async throws {
        try await ServiceHarness.with(token: "s3cret", configure: { $0.allowedHosts = ["sluice.example"] }) { harness in
            try Self.write(Self.content, to: harness.data + "/documents/t.bin")
            let before = try await Self.fastAnswers(harness)
            var answers: [RawHTTPResponse] = []
            for headers in [
                [:], ["Authorization": "Bearer wrong"], ["Authorization": "Bearer s3cret", "Range": "bytes=1-2"],
                ["Authorization": "Bearer s3cret", "Host": "evil.example"],
            ] {
                answers += try await Self.pipelined(port: harness.port, [("/files/t.bin", headers)])
            }
            #expect(answers.map(\.status) == [401, 401, 206, 421])
            #expect(answers[2].body == Array(Self.content[1...2]))
            #expect(try await Self.fastAnswers(harness) - before == 1)
            // Answered on either path, a request is timed under the same route label.
            let metrics = String(decoding: try await harness.request(.GET, "/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"sluice_http_request_duration_seconds_count{method="GET",route="/files/**",status="206"} 1"#))
            #expect(metrics.contains(#"sluice_http_request_duration_seconds_count{method="GET",route="/files/**",status="401"} 2"#))
        }
    }

    /// A symlinked directory pointed at a new release: the next request serves the new
    /// file, not the one the cache opened through the old link (it did, until the cache
    /// checked the path as requested rather than as first resolved).
    @Test func aSymlinkedDirectoryMovedToANewTargetServesTheNewFile() async throws {
        try await ServiceHarness.with { harness in
            let documents = harness.data + "/documents"
            for (release, bytes) in [("v1", Array("first".utf8)), ("v2", Array("second".utf8))] {
                try FileManager.default.createDirectory(atPath: "\(documents)/\(release)", withIntermediateDirectories: true)
                try Self.write(bytes, to: "\(documents)/\(release)/app.bin")
            }
            #expect(symlink("v1", documents + "/current") == 0)
            let first = try await Self.pipelined(port: harness.port, [("/files/current/app.bin", [:])])
            #expect(first[0].body == Array("first".utf8))
            #expect(unlink(documents + "/current") == 0)
            #expect(symlink("v2", documents + "/current") == 0)
            let second = try await Self.pipelined(port: harness.port, [("/files/current/app.bin", [:])])
            #expect(second[0].body == Array("second".utf8))
            #expect(unlink(documents + "/current") == 0)
            let gone = try await Self.pipelined(port: harness.port, [("/files/current/app.bin", [:])])
            #expect(gone[0].status == 404)
        }
    }

    /// A client that half-closes after its request (`nc -N`) still gets the whole file:
    /// the end of its input waits until the answer is sent (Hummingbird, which never saw
    /// the request, closed the connection at once and cut the body short).
    @Test func aHalfClosedClientGetsTheWholeFile() async throws {
        try await ServiceHarness.with { harness in
            let big = Array((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 131) })
            try Self.write(big, to: harness.data + "/documents/big.bin")
            let request = "GET /files/big.bin HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\n\r\n"
            let raw = try await RawHTTPClient.exchange(port: harness.port, request: Array(request.utf8), halfClose: true)
            let response = try RawHTTPClient.parse(raw, isHead: false)
            #expect(response.status == 200)
            #expect(!response.truncated)
            #expect(response.body.count == big.count)
            #expect(response.body == big)
        }
    }
}

/// docs/security.md, "Browsers": a downloaded page served from `/files/` cannot run as the
/// service's own origin, whichever path serves it.
@Suite struct DownloadedPageTests {
    @Test func downloadedPagesCannotRunOnTheServicesOrigin() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            try "<script>alert(1)</script>".write(toFile: service.data + "/documents/report.html", atomically: true, encoding: .utf8)
            let page = try await service.raw("GET", "/files/report.html")
            #expect(page.status == 200)
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.header("Content-Security-Policy") == "sandbox")
            let ranged = try await service.raw("GET", "/files/report.html", headers: ["Range": "bytes=0-3"])
            #expect(ranged.status == 206)
            #expect(ranged.header("Content-Security-Policy") == "sandbox")
            // The dashboard has a policy its own files satisfy: scripts from itself only.
            let dashboard = try await service.raw("GET", "/")
            let policy = try #require(dashboard.header("Content-Security-Policy"))
            #expect(policy.contains("script-src 'self'"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(!policy.contains("unsafe-inline"))
            #expect(dashboard.header("X-Content-Type-Options") == "nosniff")
            #expect(try await service.raw("GET", "/jobs").header("X-Content-Type-Options") == "nosniff")
        }
    }
}
