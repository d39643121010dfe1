import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Records every request an origin answers and the body bytes it really sent, so tests
/// can count what a client fetched ("only the missing bytes", "fetched twice").
public final class RequestRecorder: Sendable {
    public struct Entry: Sendable {
        public var path: String
        public var range: String?
        public var ifRange: String?
        public var status: Int
        public var bodyBytes: Int64
    }

    private let entries = Mutex<[Entry]>([])

    public init() {}

    public var all: [Entry] { entries.withLock { $0 } }

    /// Body bytes sent for requests whose path starts with `prefix`.
    public func bytesSent(pathPrefix prefix: String = "/") -> Int64 {
        all.filter { $0.path.hasPrefix(prefix) }.reduce(0) { $0 + $1.bodyBytes }
    }

    func begin(_ entry: Entry) -> Int {
        entries.withLock {
            $0.append(entry)
            return $0.count - 1
        }
    }

    func add(_ count: Int, to index: Int) {
        entries.withLock { $0[index].bodyBytes += Int64(count) }
    }
}

extension RequestRecorder {
    /// Wraps a responder so that every answer, thrown errors included, is recorded with the
    /// body bytes really written.
    func recording<Inner: HTTPResponder>(_ inner: Inner) -> CallbackResponder<Inner.Context> {
        CallbackResponder { request, context in
            let response: Response
            do {
                response = try await inner.respond(to: request, context: context)
            } catch {
                let status = (error as? any HTTPResponseError)?.status.code ?? 500
                _ = self.begin(
                    .init(path: request.uri.description, range: request.headers[.range], ifRange: request.headers[.ifRange], status: status, bodyBytes: 0)
                )
                throw error
            }
            let index = self.begin(
                .init(
                    path: request.uri.description, range: request.headers[.range], ifRange: request.headers[.ifRange],
                    status: Int(response.status.code), bodyBytes: 0
                )
            )
            var recorded = response
            let body = response.body
            // Keep the announced length: wrapping must not turn the body into a chunked one.
            recorded.body = ResponseBody(contentLength: body.contentLength) { writer in
                try await body.write(
                    writer.map { buffer in
                        self.add(buffer.readableBytes, to: index)
                        return buffer
                    }
                )
            }
            recorded.headers = response.headers
            return recorded
        }
    }
}

/// Serves `/changing/SIZE?after=N`: the first N requests see `/testdata/SIZE?seed=1&etag=one`,
/// later ones `/testdata/SIZE?seed=2&etag=two`, as if the file were replaced mid-download.
final class ChangingFile: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func rewrite(_ request: Request) -> Request {
        let path = request.uri.path
        guard path.hasPrefix("/changing/") else { return request }
        let after = request.uri.queryParameters.get("after", as: Int.self) ?? 1
        let seen = counts.withLock { counts in
            counts[request.uri.description, default: 0] += 1
            return counts[request.uri.description]!
        }
        let version = seen <= after ? "seed=1&etag=one" : "seed=2&etag=two"
        var head = request.head
        head.path = "/testdata/" + path.dropFirst("/changing/".count) + "?" + version
        return Request(head: head, body: request.body)
    }
}
