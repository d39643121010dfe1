import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// An HTTP/1.1 forward proxy on 127.0.0.1 for tests of downloads through a proxy: it
/// tunnels `CONNECT host:port` (how https goes through it) and forwards absolute-form
/// requests (`GET http://host:port/path`, one per connection, how http goes), can
/// demand Basic credentials, refuse everything or drop tunnels, and records what it saw.
public final class TestHTTPProxy: Sendable {
    public enum Mode: Sendable {
        /// Tunnels and forwards.
        case normal
        /// Answers every request `403 Forbidden` and closes.
        case refuse
        /// Answers CONNECT `200` and closes the connection at once; closes an absolute-form
        /// request's connection without an answer.
        case dropAfterConnect
    }

    /// One request the proxy received, before any check.
    public struct Entry: Sendable {
        public var method: String
        /// `host:port` for CONNECT, the absolute URL otherwise.
        public var target: String
        public var proxyAuthorization: String?
    }

    /// The port the proxy listens on, on 127.0.0.1.
    public let port: Int
    private let log: Log
    private let listener: any Channel
    private let open: OpenChannels

    /// Starts listening on a port the kernel picks. With `credentials`, a request without
    /// the matching `Proxy-Authorization: Basic` header is answered `407` and closed.
    public init(credentials: (user: String, password: String)? = nil, mode: Mode = .normal) async throws {
        let expected = credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        let log = Log(mode: mode, expectedAuthorization: expected)
        let open = OpenChannels()
        listener = try await open.listen { channel in
            try channel.pipeline.syncOperations.addHandlers(
                ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)),
                HTTPProxyHandler(log: log, open: open)
            )
        }
        port = listener.localAddress?.port ?? 0
        self.log = log
        self.open = open
    }

    /// Every request received, in order.
    public var entries: [Entry] { log.entries.withLock { $0 } }

    /// Bytes relayed from targets to clients.
    public var tunnelledBytes: Int64 { log.tunnelledBytes.load(ordering: .relaxed) }

    /// Closes the listener and every open connection, relayed ones included.
    public func shutdown() async throws {
        try await open.closeAll(listener: listener)
    }

    /// What the connections share: the settings and the record.
    final class Log: Sendable {
        let mode: Mode
        let expectedAuthorization: String?
        let entries = Mutex<[Entry]>([])
        let tunnelledBytes = Atomic<Int64>(0)

        init(mode: Mode, expectedAuthorization: String?) {
            self.mode = mode
            self.expectedAuthorization = expectedAuthorization
        }

        func addTunnelled(_ count: Int) {
            tunnelledBytes.add(Int64(count), ordering: .relaxed)
        }
    }
}

/// Answers one client connection of a `TestHTTPProxy`; the pipeline holds only the
/// request decoder before it, so answers are written as raw bytes.
private final class HTTPProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private enum State {
        case idle
        /// A CONNECT head arrived; the tunnel opens at its end.
        case connectHead(host: String, port: Int)
        case connecting
        /// Forwarding an absolute-form request: parts wait here until the target is connected.
        case forwarding(pending: [HTTPClientRequestPart], target: (any Channel)?)
        case done
    }

    private let log: TestHTTPProxy.Log
    private let open: OpenChannels
    private var state = State.idle

    init(log: TestHTTPProxy.Log, open: OpenChannels) {
        self.log = log
        self.open = open
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head(let head), .idle):
            received(head, context: context)
        case (.end, .connectHead(let host, let port)):
            state = .connecting
            openTunnel(to: host, port: port, context: context)
        case (.body(let body), .forwarding(let pending, let target)):
            forward(.body(.byteBuffer(body)), pending: pending, target: target)
        case (.end(let trailers), .forwarding(let pending, let target)):
            forward(.end(trailers), pending: pending, target: target)
        default:
            // A body for CONNECT, or anything after the one request this connection serves.
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func received(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let authorization = head.headers.first(name: "proxy-authorization")
        log.entries.withLock { $0.append(.init(method: head.method.rawValue, target: head.uri, proxyAuthorization: authorization)) }
        if log.mode == .refuse {
            // Said to come from the proxy itself, as RFC 9209 has a proxy say it.
            return refuse("403 Forbidden", extra: "Proxy-Status: test-proxy; error=http_request_denied\r\n", context: context)
        }
        if let expected = log.expectedAuthorization, authorization != expected {
            return refuse("407 Proxy Authentication Required", extra: "Proxy-Authenticate: Basic realm=\"test\"\r\n", context: context)
        }
        if head.method == .CONNECT {
            guard let (host, port) = Self.hostAndPort(head.uri) else { return refuse("400 Bad Request", context: context) }
            state = .connectHead(host: host, port: port)
        } else {
            guard let url = URLComponents(string: head.uri), url.scheme == "http", let host = url.host, !host.isEmpty else {
                return refuse("400 Bad Request", context: context)
            }
            if log.mode == .dropAfterConnect {
                state = .done
                context.close(promise: nil)
                return
            }
            var forwarded = head
            forwarded.uri =
                (url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath)
                + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
            for name in ["proxy-authorization", "proxy-connection", "connection", "keep-alive"] {
                forwarded.headers.remove(name: name)
            }
            forwarded.headers.add(name: "connection", value: "close")
            state = .forwarding(pending: [.head(forwarded)], target: nil)
            openForwarding(to: host, port: url.port ?? 80, context: context)
        }
    }

    private func refuse(_ status: String, extra: String = "", context: ChannelHandlerContext) {
        state = .done
        context.answerAndClose("HTTP/1.1 \(status)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n")
    }

    private func openTunnel(to host: String, port: Int, context: ChannelHandlerContext) {
        if log.mode == .dropAfterConnect {
            state = .done
            return context.answerAndClose("HTTP/1.1 200 Connection established\r\n\r\n")
        }
        open.connect(on: context.eventLoop, to: .hostPort(host, port)).assumeIsolated().whenComplete { result in
            switch result {
            case .failure:
                self.refuse("502 Bad Gateway", context: context)
            case .success(let target):
                self.state = .done
                let log = self.log
                let relay = ByteRelay.pair(countingTargetBytes: { log.addTunnelled($0) })
                do {
                    try target.pipeline.syncOperations.addHandler(relay.target)
                    context.writeRaw("HTTP/1.1 200 Connection established\r\n\r\n")
                    // The relay joins at the end; then this handler and the decoder leave, the
                    // decoder handing any bytes it holds on to the relay.
                    let pipeline = context.pipeline.syncOperations
                    try pipeline.addHandler(relay.client)
                    let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                    pipeline.removeHandler(context: context, promise: nil)
                    pipeline.removeHandler(decoder, promise: nil)
                } catch {
                    target.close(promise: nil)
                    context.close(promise: nil)
                }
            }
        }
    }

    private func openForwarding(to host: String, port: Int, context: ChannelHandlerContext) {
        open.connect(on: context.eventLoop, to: .hostPort(host, port)).assumeIsolated().whenComplete { result in
            guard case .forwarding(let pending, _) = self.state else { return }
            switch result {
            case .failure:
                self.refuse("502 Bad Gateway", context: context)
            case .success(let target):
                let log = self.log
                let relay = ByteRelay.pair(countingTargetBytes: { log.addTunnelled($0) })
                do {
                    // The response comes back raw through the relay; requests go out encoded.
                    try target.pipeline.syncOperations.addHandlers(relay.target, HTTPRequestEncoder())
                    try context.pipeline.syncOperations.addHandler(relay.client)
                } catch {
                    target.close(promise: nil)
                    context.close(promise: nil)
                    return
                }
                self.state = .forwarding(pending: [], target: target)
                for part in pending { target.write(part, promise: nil) }
                target.flush()
            }
        }
    }

    private func forward(_ part: HTTPClientRequestPart, pending: [HTTPClientRequestPart], target: (any Channel)?) {
        if let target {
            target.writeAndFlush(part, promise: nil)
        } else {
            state = .forwarding(pending: pending + [part], target: nil)
        }
    }

    /// `host:port` or `[v6]:port`.
    private static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return host.isEmpty ? nil : (String(host), port)
    }
}
