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
        /// Every header of the request, as it arrived.
        public var headers: HTTPFields = [:]
    }

    private let entries = Mutex<[Entry]>([])
    private let concurrency = Mutex<(now: Int, maximum: Int)>((0, 0))
    private let peerAddresses = Mutex<[String]>([])

    /// The address of every connection the origin accepted, in order: which host a
    /// request came from (a proxy that connects from 127.0.0.2, say).
    public var peers: [String] { peerAddresses.withLock { $0 } }

    /// A handler for the origin's channels that records each connection's peer address.
    func peerLogger() -> PeerLogger { PeerLogger(recorder: self) }

    func connected(from address: String) { peerAddresses.withLock { $0.append(address) } }

    public init() {}

    public var all: [Entry] { entries.withLock { $0 } }

    /// The most requests the origin was answering at once (a request counts until its
    /// body is sent): with one request per connection at a time, the most connections busy.
    public var maximumConcurrent: Int { concurrency.withLock { $0.maximum } }

    /// Requests the origin is answering now.
    public var inFlight: Int { concurrency.withLock { $0.now } }

    func started() {
        concurrency.withLock {
            $0.now += 1
            $0.maximum = max($0.maximum, $0.now)
        }
    }

    func ended() { concurrency.withLock { $0.now -= 1 } }

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
            self.started()
            do {
                response = try await inner.respond(to: request, context: context)
            } catch {
                self.ended()
                let status = (error as? any HTTPResponseError)?.status.code ?? 500
                _ = self.begin(
                    .init(
                        path: request.uri.description, range: request.headers[.range], ifRange: request.headers[.ifRange], status: status,
                        bodyBytes: 0, headers: request.headers)
                )
                throw error
            }
            let index = self.begin(
                .init(
                    path: request.uri.description, range: request.headers[.range], ifRange: request.headers[.ifRange],
                    status: Int(response.status.code), bodyBytes: 0, headers: request.headers
                )
            )
            var recorded = response
            let body = response.body
            // Keep the announced length: wrapping must not turn the body into a chunked one.
            recorded.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer { self.ended() }
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

/// Records the peer address of a connection when it becomes active.
final class PeerLogger: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny
    let recorder: RequestRecorder

    init(recorder: RequestRecorder) { self.recorder = recorder }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive, let address = context.channel.remoteAddress?.ipAddress { recorder.connected(from: address) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if let address = context.channel.remoteAddress?.ipAddress { recorder.connected(from: address) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.fireChannelRead(data) }
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
