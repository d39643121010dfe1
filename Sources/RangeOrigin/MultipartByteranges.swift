import Hummingbird
import NIOCore
import SluiceCore

/// The layout of a `multipart/byteranges` body (RFC 9110 §14.6): the text around each part
/// is computed up front so that the exact Content-Length is known before the first byte.
struct MultipartByteranges: Sendable {
    let boundary: String
    let parts: [(range: ByteRange, header: String)]
    let closing: String

    init(ranges: [ByteRange], length: Int64, contentType: String, boundary: String) {
        self.boundary = boundary
        self.parts = ranges.enumerated().map { index, range in
            let lead = index == 0 ? "" : "\r\n"
            let header =
                "\(lead)--\(boundary)\r\nContent-Type: \(contentType)\r\n"
                + "Content-Range: \(ContentRange.range(range, completeLength: length).headerValue)\r\n\r\n"
            return (range, header)
        }
        self.closing = "\r\n--\(boundary)--\r\n"
    }

    var contentType: String { "multipart/byteranges; boundary=\(boundary)" }

    var contentLength: Int64 {
        parts.reduce(Int64(closing.utf8.count)) { $0 + Int64($1.header.utf8.count) + $1.range.count }
    }

    func write(from source: some ByteSource, to writer: inout any ResponseBodyWriter) async throws {
        for part in parts {
            try await writer.write(ByteBuffer(string: part.header))
            try await source.write(part.range.first..<(part.range.last + 1), to: &writer)
        }
        try await writer.write(ByteBuffer(string: closing))
    }

    static func makeBoundary() -> String {
        "sluice-" + String(UInt64.random(in: .min ... .max), radix: 16)
    }
}
