import Foundation
import SluiceTestSupport
import Testing

/// The origin's answers to Range headers, written as literal strings from RFC 9110's
/// examples rather than produced by Sluice's own formatter.
@Suite struct FileRangeTableTests {
    struct Row: Sendable, CustomStringConvertible {
        var range: String?
        var size: Int
        var status: Int
        var contentRange: String?
        var bytes: Range<Int>?
        var description: String { "\(range ?? "no Range") on \(size) bytes" }
    }

    static let rows: [Row] = [
        Row(range: nil, size: 100, status: 200, contentRange: nil, bytes: 0..<100),
        Row(range: "bytes=0-499", size: 10000, status: 206, contentRange: "bytes 0-499/10000", bytes: 0..<500),
        Row(range: "bytes=500-999", size: 10000, status: 206, contentRange: "bytes 500-999/10000", bytes: 500..<1000),
        Row(range: "bytes=-500", size: 10000, status: 206, contentRange: "bytes 9500-9999/10000", bytes: 9500..<10000),
        Row(range: "bytes=9500-", size: 10000, status: 206, contentRange: "bytes 9500-9999/10000", bytes: 9500..<10000),
        Row(range: "bytes=0-999999", size: 100, status: 206, contentRange: "bytes 0-99/100", bytes: 0..<100),
        Row(range: "bytes=-200", size: 100, status: 206, contentRange: "bytes 0-99/100", bytes: 0..<100),
        Row(range: "bytes=99-", size: 100, status: 206, contentRange: "bytes 99-99/100", bytes: 99..<100),
        Row(range: "bytes=100-", size: 100, status: 416, contentRange: "bytes */100", bytes: nil),
        Row(range: "bytes=-0", size: 100, status: 416, contentRange: "bytes */100", bytes: nil),
        Row(range: "bytes=5-3", size: 100, status: 200, contentRange: nil, bytes: 0..<100),
        Row(range: "bytes=x-y", size: 100, status: 200, contentRange: nil, bytes: 0..<100),
        Row(range: "items=0-1", size: 100, status: 200, contentRange: nil, bytes: 0..<100),
        Row(range: "bytes=0-99999999999999999999", size: 100, status: 206, contentRange: "bytes 0-99/100", bytes: 0..<100),
        Row(range: "bytes=99999999999999999999-", size: 100, status: 416, contentRange: "bytes */100", bytes: nil),
        Row(range: "bytes=-99999999999999999999", size: 100, status: 206, contentRange: "bytes 0-99/100", bytes: 0..<100),
        Row(range: "bytes=,,10-19,", size: 100, status: 206, contentRange: "bytes 10-19/100", bytes: 10..<20),
        Row(range: "bytes=10-19,20-29", size: 100, status: 206, contentRange: "bytes 10-29/100", bytes: 10..<30),
        Row(range: "bytes=-5", size: 0, status: 200, contentRange: nil, bytes: 0..<0),
        Row(range: "bytes=0-", size: 0, status: 200, contentRange: nil, bytes: 0..<0),
        Row(
            range: "bytes=" + Array(repeating: "0-0", count: 200).joined(separator: ","), size: 100, status: 200,
            contentRange: nil, bytes: 0..<100
        ),
    ]

    static func content(_ size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 256) } }

    @Test(arguments: rows)
    func answers(row: Row) async throws {
        try await withTemporaryDirectory { directory in
            let content = Self.content(row.size)
            try directory.write("file.bin", content)
            try await withOrigin(root: directory.path) { port in
                var headers: [String: String] = [:]
                if let range = row.range { headers["Range"] = range }
                let response = try await RawHTTPClient.request(port: port, path: "/files/file.bin", headers: headers)
                #expect(response.status == row.status)
                #expect(response.header("Content-Range") == row.contentRange)
                #expect(response.header("Accept-Ranges") == "bytes")
                if let bytes = row.bytes {
                    #expect(response.body == Array(content[bytes]))
                    #expect(response.header("Content-Length") == String(bytes.count))
                } else {
                    #expect(response.body.isEmpty)
                }
            }
        }
    }
}
