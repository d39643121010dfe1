import AsyncHTTPClient
import Foundation
import NIOCore
import SluiceTestSupport

/// Reads Server-Sent Events from a live stream: a socket's (`ServiceHarness`) or a route's
/// body as it is written in process (`RouterHarness.stream`).
struct EventReader {
    private var nextChunk: () async throws -> ByteBuffer?
    var buffer = ""
    /// The `id:` of the last event read.
    var lastID: String?

    init(_ response: HTTPClientResponse) {
        self.init(chunks: response.body)
    }

    init(_ reply: RouterHarness.StreamedReply) {
        self.init(chunks: reply.body)
    }

    private init<Chunks: AsyncSequence & Sendable>(chunks: Chunks) where Chunks.Element == ByteBuffer {
        let iterator = ChunkIterator(chunks.makeAsyncIterator())
        nextChunk = { try await iterator.next() }
    }

    /// The next event: its type and data; nil when the stream ends.
    mutating func next() async throws -> (event: String, data: [String: Any])? {
        while true {
            if let range = buffer.range(of: "\n\n") {
                let frame = buffer[..<range.lowerBound]
                buffer.removeSubrange(..<range.upperBound)
                var event = "message"
                var data = ""
                for line in frame.split(separator: "\n") {
                    if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                    if line.hasPrefix("id: ") { lastID = String(line.dropFirst(4)) }
                }
                guard !data.isEmpty else { continue }
                let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] ?? [:]
                return (event, object)
            }
            guard let chunk = try await nextChunk() else { return nil }
            buffer += String(buffer: chunk)
        }
    }

    /// Reads events until one satisfies `condition`.
    mutating func until(_ condition: (String, [String: Any]) -> Bool) async throws -> (event: String, data: [String: Any]) {
        while let event = try await next() {
            if condition(event.event, event.data) { return event }
        }
        throw RawHTTPClient.Failure(description: "stream ended")
    }
}

/// An async iterator behind a reference, so that a reader's closure can advance it.
private final class ChunkIterator<Base: AsyncIteratorProtocol>: @unchecked Sendable where Base.Element == ByteBuffer {
    private var base: Base

    init(_ base: Base) { self.base = base }

    func next() async throws -> ByteBuffer? { try await base.next() }
}
