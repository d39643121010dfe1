import Foundation
import SluiceTestSupport
import Testing

@Suite struct ConditionalRequestTests {
    /// A file whose modification time is far in the past, so Last-Modified is strong.
    static func withFile(_ body: @Sendable (_ port: Int, _ etag: String, _ lastModified: String) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let path = try directory.write("data.txt", FileRangeTableTests.content(1000))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)], ofItemAtPath: path)
            try await withOrigin(root: directory.path) { port in
                let head = try await RawHTTPClient.request(port: port, method: "HEAD", path: "/files/data.txt")
                let etag = try #require(head.header("ETag"))
                #expect(head.header("Last-Modified") == "Tue, 14 Nov 2023 22:13:20 GMT")
                try await body(port, etag, "Tue, 14 Nov 2023 22:13:20 GMT")
            }
        }
    }

    static func get(_ port: Int, _ headers: [String: String], method: String = "GET") async throws -> RawHTTPResponse {
        try await RawHTTPClient.request(port: port, method: method, path: "/files/data.txt", headers: headers)
    }

    @Test func validatorsAreStrongAndComplete() async throws {
        try await Self.withFile { (port, etag, _) async throws in
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
            let full = try await Self.get(port, [:])
            let partial = try await Self.get(port, ["Range": "bytes=0-9"])
            for header in ["ETag", "Last-Modified", "Cache-Control", "Accept-Ranges", "Content-Type"] {
                #expect(full.header(header) != nil)
                #expect(partial.header(header) == full.header(header), "\(header) differs between 200 and 206")
            }
            #expect(full.header("Date") != nil && partial.header("Date") != nil)
        }
    }

    @Test func headAnswersLikeGetWithoutBodyAndIgnoresRange() async throws {
        try await Self.withFile { (port, _, _) async throws in
            let get = try await Self.get(port, [:])
            let head = try await Self.get(port, ["Range": "bytes=0-9"], method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == "1000")
            #expect(head.header("Content-Range") == nil)
            for header in ["ETag", "Last-Modified", "Accept-Ranges", "Content-Type", "Content-Length"] {
                #expect(head.header(header) == get.header(header))
            }
        }
    }

    @Test func ifNoneMatchWinsOverRange() async throws {
        try await Self.withFile { (port, etag, _) async throws in
            let response = try await Self.get(port, ["If-None-Match": etag, "Range": "bytes=0-9"])
            #expect(response.status == 304)
            #expect(response.body.isEmpty)
            #expect(response.header("ETag") == etag)
            let weak = try await Self.get(port, ["If-None-Match": "\"other\", W/\(etag)"])
            #expect(weak.status == 304)
            let other = try await Self.get(port, ["If-None-Match": "\"other\""])
            #expect(other.status == 200)
        }
    }

    @Test func ifMatchAndIfUnmodifiedSince() async throws {
        try await Self.withFile { (port, etag, lastModified) async throws in
            #expect(try await Self.get(port, ["If-Match": "\"nope\""]).status == 412)
            #expect(try await Self.get(port, ["If-Match": "W/\(etag)"]).status == 412)
            #expect(try await Self.get(port, ["If-Match": etag, "Range": "bytes=0-0"]).status == 206)
            #expect(try await Self.get(port, ["If-Unmodified-Since": "Tue, 14 Nov 2023 22:13:19 GMT"]).status == 412)
            #expect(try await Self.get(port, ["If-Unmodified-Since": lastModified]).status == 200)
            // If-Match takes precedence: If-Unmodified-Since is then not evaluated.
            #expect(try await Self.get(port, ["If-Match": etag, "If-Unmodified-Since": "Tue, 14 Nov 2023 22:13:19 GMT"]).status == 200)
            // Precondition failure comes before 304.
            #expect(try await Self.get(port, ["If-Match": "\"nope\"", "If-None-Match": etag]).status == 412)
        }
    }

    @Test func ifModifiedSince() async throws {
        try await Self.withFile { (port, etag, lastModified) async throws in
            #expect(try await Self.get(port, ["If-Modified-Since": lastModified]).status == 304)
            #expect(try await Self.get(port, ["If-Modified-Since": "Tue, 14 Nov 2023 22:13:19 GMT"]).status == 200)
            #expect(try await Self.get(port, ["If-Modified-Since": "not a date"]).status == 200)
            // If-None-Match present: If-Modified-Since is ignored.
            #expect(try await Self.get(port, ["If-None-Match": "\"other\"", "If-Modified-Since": lastModified]).status == 200)
        }
    }

    @Test func ifRangeUsesStrongComparisonAndExactDates() async throws {
        try await Self.withFile { (port, etag, lastModified) async throws in
            let range = "bytes=10-19"
            #expect(try await Self.get(port, ["Range": range, "If-Range": etag]).status == 206)
            let changed = try await Self.get(port, ["Range": range, "If-Range": "\"changed\""])
            #expect(changed.status == 200)
            #expect(changed.body.count == 1000)
            #expect(try await Self.get(port, ["Range": range, "If-Range": "W/\(etag)"]).status == 200)
            #expect(try await Self.get(port, ["Range": range, "If-Range": lastModified]).status == 206)
            #expect(try await Self.get(port, ["Range": range, "If-Range": "Tue, 14 Nov 2023 22:13:21 GMT"]).status == 200)
            #expect(try await Self.get(port, ["Range": range, "If-Range": "Tue, 14 Nov 2023 22:13:19 GMT"]).status == 200)
            #expect(try await Self.get(port, ["If-Range": etag]).status == 200)
        }
    }

    @Test func preconditionsDoNotTurnA404IntoAnythingElse() async throws {
        try await Self.withFile { (port, etag, _) async throws in
            let response = try await RawHTTPClient.request(
                port: port, path: "/files/missing.txt", headers: ["If-Range": etag, "Range": "bytes=0-1", "If-None-Match": "*"]
            )
            #expect(response.status == 404)
        }
    }
}
