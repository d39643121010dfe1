import Foundation
import SluiceTestSupport
import Testing

@Suite struct TestDataTests {
    /// splitmix64 as docs/origin.md, "Generated test data", writes it, independent of the
    /// origin's generator.
    static func expected(_ range: Range<Int>, seed: UInt64 = 0) -> [UInt8] {
        range.map { offset in
            var z = seed &+ UInt64(offset / 8) &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z = z ^ (z >> 31)
            return UInt8(truncatingIfNeeded: z >> (8 * UInt64(offset % 8)))
        }
    }

    static func withTestOrigin(_ body: @Sendable (Int) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path, body)
        }
    }

    @Test(arguments: [
        ("0", 0, UInt64(0)), ("1", 1, 0), ("9", 9, 3), ("1000", 1000, 0), ("1K", 1024, 77), ("1M", 1 << 20, 5),
        // Seeds past Int64.max: docs/origin.md, "Generated test data", takes the whole
        // UInt64 range.
        ("100", 100, UInt64(1) << 63), ("100", 100, UInt64.max), ("64K", 64 << 10, UInt64.max - 3),
    ])
    func wholeBodies(size: String, count: Int, seed: UInt64) async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let response = try await RawHTTPClient.request(port: port, path: "/testdata/\(size)?seed=\(seed)")
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == String(count))
            #expect(response.header("ETag") == "\"td-\(count)-\(seed)\"")
            #expect(response.header("Last-Modified") == "Thu, 01 Jan 2026 00:00:00 GMT")
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.body == Self.expected(0..<count, seed: seed))
        }
    }

    @Test(arguments: [("bytes=3-17", 3..<18), ("bytes=-5", 995..<1000), ("bytes=999-", 999..<1000), ("bytes=8-15", 8..<16)])
    func ranges(header: String, bytes: Range<Int>) async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let response = try await RawHTTPClient.request(port: port, path: "/testdata/1000?seed=9", headers: ["Range": header])
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/1000")
            #expect(response.body == Self.expected(bytes, seed: 9))
        }
    }

    @Test func hugeSizesAreServedLazily() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let head = try await RawHTTPClient.request(port: port, method: "HEAD", path: "/testdata/1024G")
            #expect(head.header("Content-Length") == "1099511627776")
            let tail = try await RawHTTPClient.request(port: port, path: "/testdata/1024G", headers: ["Range": "bytes=-16"])
            #expect(tail.header("Content-Range") == "bytes 1099511627760-1099511627775/1099511627776")
            #expect(tail.body.count == 16)
            #expect(try await RawHTTPClient.request(port: port, path: "/testdata/1025G").status == 400)
            #expect(try await RawHTTPClient.request(port: port, path: "/testdata/abc").status == 400)
            #expect(try await RawHTTPClient.request(port: port, path: "/testdata/1M?rate=abc").status == 400)
        }
    }

    @Test func cutClosesTheConnectionBeforeTheOffset() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let cut = try await RawHTTPClient.request(port: port, path: "/testdata/100000?cut=40000,70000")
            #expect(cut.status == 200)
            #expect(cut.truncated)
            #expect(cut.body == Self.expected(0..<40000))
            // A request starting at or after a cut is not cut there, only at the next one.
            let resumed = try await RawHTTPClient.request(
                port: port, path: "/testdata/100000?cut=40000,70000", headers: ["Range": "bytes=40000-"]
            )
            #expect(resumed.status == 206)
            #expect(resumed.truncated)
            #expect(resumed.body == Self.expected(40000..<70000))
            let past = try await RawHTTPClient.request(
                port: port, path: "/testdata/100000?cut=40000,70000", headers: ["Range": "bytes=70000-"]
            )
            #expect(!past.truncated)
            #expect(past.body == Self.expected(70000..<100000))
        }
    }

    @Test func statusTimesCountsRequestsPerURL() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let path = "/testdata/100?status=503&times=2&retry=1"
            let first = try await RawHTTPClient.request(port: port, path: path)
            #expect(first.status == 503)
            #expect(first.header("Retry-After") == "1")
            // Another URL has its own count.
            #expect(try await RawHTTPClient.request(port: port, path: path + "&seed=1").status == 503)
            #expect(try await RawHTTPClient.request(port: port, path: path).status == 503)
            let third = try await RawHTTPClient.request(port: port, path: path)
            #expect(third.status == 200)
            #expect(third.body == Self.expected(0..<100))
        }
    }

    /// 204, 205 and 304 have no content: bytes after their head would be taken for the
    /// next response on a keep-alive connection.
    @Test(arguments: [204, 205, 304])
    func injectedStatusesWithoutContentSendNone(status: Int) async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let raw = try await RawHTTPClient.exchange(
                port: port,
                request: Array("GET /testdata/10?status=\(status) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            )
            let text = String(decoding: raw, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 \(status)"))
            #expect(text.hasSuffix("\r\n\r\n"), "\(text.debugDescription)")
            #expect(!text.contains("injected"))
        }
    }

    @Test func norangeIgnoresRangeAndIfRange() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let response = try await RawHTTPClient.request(
                port: port, path: "/testdata/1000?norange=1", headers: ["Range": "bytes=10-19", "If-Range": "\"td-1000-0\""]
            )
            #expect(response.status == 200)
            #expect(response.header("Accept-Ranges") == nil)
            #expect(response.body == Self.expected(0..<1000))
        }
    }

    @Test func nolengthSendsChunkedWithoutRanges() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let response = try await RawHTTPClient.request(
                port: port, path: "/testdata/300000?nolength=1", headers: ["Range": "bytes=10-19"]
            )
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == nil)
            #expect(response.header("Transfer-Encoding")?.lowercased() == "chunked")
            #expect(!response.truncated)
            #expect(response.body == Self.expected(0..<300_000))
        }
    }

    @Test func etagParameterChangesTheValidator() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let old = try await RawHTTPClient.request(
                port: port, path: "/testdata/1000?etag=v2", headers: ["Range": "bytes=0-9", "If-Range": "\"td-1000-0\""]
            )
            #expect(old.status == 200)
            #expect(old.header("ETag") == "\"v2\"")
            let same = try await RawHTTPClient.request(
                port: port, path: "/testdata/1000?etag=v2", headers: ["Range": "bytes=0-9", "If-Range": "\"v2\""]
            )
            #expect(same.status == 206)
            #expect(try await RawHTTPClient.request(port: port, path: "/testdata/10?etag=a%22b").status == 400)
        }
    }

    @Test func redirectCountsDown() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let first = try await RawHTTPClient.request(port: port, path: "/testdata/10?redirect=2&seed=1")
            #expect(first.status == 302)
            #expect(first.header("Location") == "/testdata/10?redirect=1&seed=1")
            let second = try await RawHTTPClient.request(port: port, path: "/testdata/10?redirect=1&seed=1")
            #expect(second.header("Location") == "/testdata/10?redirect=0&seed=1")
            let last = try await RawHTTPClient.request(port: port, path: "/testdata/10?redirect=0&seed=1")
            #expect(last.status == 200)
            #expect(last.body == Self.expected(0..<10, seed: 1))
        }
    }

    @Test func delayAndRateSlowTheAnswer() async throws {
        try await Self.withTestOrigin { (port: Int) async throws in
            let clock = ContinuousClock()
            let delayed = try await clock.measure {
                _ = try await RawHTTPClient.request(port: port, path: "/testdata/10?delay=300")
            }
            #expect(delayed >= .milliseconds(300))
            let paced = try await clock.measure {
                let response = try await RawHTTPClient.request(port: port, path: "/testdata/100000?rate=200000")
                #expect(response.body.count == 100_000)
            }
            #expect(paced >= .milliseconds(450))
        }
    }
}
