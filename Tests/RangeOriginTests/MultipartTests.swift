import Foundation
import SluiceTestSupport
import Testing

@Suite struct MultipartTests {
    struct Part {
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Splits a multipart body on its boundary, independently of the origin's writer.
    static func parse(_ body: [UInt8], boundary: String) throws -> [Part] {
        let delimiter = Array("--\(boundary)".utf8)
        var parts: [Part] = []
        var rest = body[...]
        guard let first = rest.firstRange(of: delimiter), first.lowerBound == rest.startIndex else {
            throw RawHTTPClient.Failure(description: "body does not start with the boundary")
        }
        rest = rest[first.upperBound...]
        while !rest.starts(with: Array("--".utf8)) {
            guard rest.starts(with: [13, 10]) else { throw RawHTTPClient.Failure(description: "no CRLF after boundary") }
            rest = rest.dropFirst(2)
            guard let headEnd = rest.firstRange(of: [13, 10, 13, 10]) else {
                throw RawHTTPClient.Failure(description: "part without head")
            }
            var headers: [String: String] = [:]
            for line in String(decoding: rest[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n") {
                let pieces = line.split(separator: ":", maxSplits: 1)
                headers[String(pieces[0]).lowercased()] = pieces[1].trimmingCharacters(in: .whitespaces)
            }
            rest = rest[headEnd.upperBound...]
            guard let next = rest.firstRange(of: [13, 10] + delimiter) else {
                throw RawHTTPClient.Failure(description: "part without closing boundary")
            }
            parts.append(Part(headers: headers, body: Array(rest[..<next.lowerBound])))
            rest = rest[next.upperBound...]
        }
        #expect(Array(rest) == Array("--\r\n".utf8))
        return parts
    }

    @Test func severalRangesInRequestOrder() async throws {
        try await withTemporaryDirectory { directory in
            let content = FileRangeTableTests.content(10000)
            try directory.write("report.pdf", content)
            try await withOrigin(root: directory.path) { port in
                let response = try await RawHTTPClient.request(
                    port: port, path: "/files/report.pdf", headers: ["Range": "bytes=7000-7999, 0-999,-1"]
                )
                #expect(response.status == 206)
                #expect(response.header("Content-Range") == nil)
                #expect(response.header("Content-Length") == String(response.body.count))
                let contentType = try #require(response.header("Content-Type"))
                #expect(contentType.hasPrefix("multipart/byteranges; boundary="))
                let boundary = String(contentType.dropFirst("multipart/byteranges; boundary=".count))
                let parts = try Self.parse(response.body, boundary: boundary)
                #expect(
                    parts.map { $0.headers["content-range"] } == ["bytes 7000-7999/10000", "bytes 0-999/10000", "bytes 9999-9999/10000"])
                #expect(parts.allSatisfy { $0.headers["content-type"] == "application/pdf" })
                #expect(parts.map(\.body) == [Array(content[7000..<8000]), Array(content[0..<1000]), [content[9999]]])
            }
        }
    }

    @Test func aSingleRangeIsNeverMultipart() async throws {
        try await withTemporaryDirectory { directory in
            try directory.write("a.txt", FileRangeTableTests.content(100))
            try await withOrigin(root: directory.path) { port in
                let response = try await RawHTTPClient.request(port: port, path: "/files/a.txt", headers: ["Range": "bytes=0-9"])
                #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
                #expect(response.header("Content-Range") == "bytes 0-9/100")
            }
        }
    }

    @Test func unsatisfiableRangesAreDroppedFromTheSet() async throws {
        try await withTemporaryDirectory { directory in
            let content = FileRangeTableTests.content(100)
            try directory.write("a.bin", content)
            try await withOrigin(root: directory.path) { port in
                let response = try await RawHTTPClient.request(
                    port: port, path: "/files/a.bin", headers: ["Range": "bytes=500-600,0-4"]
                )
                #expect(response.status == 206)
                #expect(response.header("Content-Range") == "bytes 0-4/100")
                #expect(response.body == Array(content[0..<5]))
            }
        }
    }
}
