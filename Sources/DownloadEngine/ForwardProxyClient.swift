import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SluiceCore

/// Plain-http requests through an HTTP proxy, as curl sends them: the request line in
/// absolute form (`GET http://host/path HTTP/1.1`, RFC 9112 §3.2.2) to the proxy, which
/// fetches the URL itself. AsyncHTTPClient tunnels every request through `CONNECT`, which
/// standard proxies allow only to port 443 (Debian's Squid answers 403 to any other), so
/// http downloads through them failed. https still goes through `CONNECT`, as it must.
///
/// One connection per request, closed when its body ends: a download's requests are
/// few and long. The body streams with backpressure (reads stop while the consumer is
/// behind), a connection silent for `readTimeout` fails with `HTTPClientError.readTimeout`
/// (a stall, to the engine), and one that closes before the body ends fails with
/// `HTTPClientError.remoteConnectionClosed`.
struct ForwardProxyClient: Sendable {
    var group: any EventLoopGroup
    var readTimeout: TimeAmount
    var connectTimeout: TimeAmount = .seconds(10)

    /// Sends `request` (its URL absolute, http) to the proxy at `host`:`port`, with
    /// `Proxy-Authorization` when `authorization` is given.
    func execute(
        _ request: HTTPClientRequest, body: ByteBuffer?, host: String, port: Int, authorization: String?, deadline: NIODeadline
    ) async throws -> HTTPClientResponse {
        guard let url = URL(string: request.url), let target = url.host, !target.isEmpty else {
            throw SluiceError(.invalidURL, "the URL cannot be fetched")
        }
        var headers = request.headers
        if !headers.contains(name: "Host") {
            headers.add(name: "Host", value: url.port.map { "\(Self.hostLiteral(target)):\($0)" } ?? Self.hostLiteral(target))
        }
        if let authorization { headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization) }
        headers.replaceOrAdd(name: "Connection", value: "close")
        if let body { headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes)) }
        let head = HTTPRequestHead(version: .http1_1, method: request.method, uri: Self.absoluteForm(url), headers: headers)

        let readTimeout = readTimeout
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: readTimeout))
                    try channel.pipeline.syncOperations.addHandler(ProxiedResponseHandler())
                }
            }
            .connect(host: host, port: port).get()

        let received = channel.eventLoop.makePromise(of: ProxiedResponseHandler.Received.self)
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            received.fail(HTTPClientError.deadlineExceeded)
            channel.close(promise: nil)
        }
        received.futureResult.whenComplete { _ in timer.cancel() }
        channel.eventLoop.execute {
            guard let handler = try? channel.pipeline.syncOperations.handler(type: ProxiedResponseHandler.self) else {
                received.fail(HTTPClientError.remoteConnectionClosed)
                return
            }
            handler.start(received)
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }
        let answer = try await withTaskCancellationHandler {
            try await received.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
        return HTTPClientResponse(
            version: answer.head.version, status: answer.head.status, headers: answer.head.headers, body: .stream(answer.body)
        )
    }

    /// `http://host[:port]/path?query`: never the URL's user information or fragment, which
    /// are not part of a request target (RFC 9110 §4.2.4, RFC 9112 §3.2.2).
    static func absoluteForm(_ url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = components.host else {
            return url.absoluteString
        }
        var target = (components.scheme ?? "http").lowercased() + "://" + hostLiteral(host)
        if let port = components.port { target += ":\(port)" }
        target += components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        return target
    }

    /// `[v6]` for an IPv6 literal, as a `Host` field writes it.
    private static func hostLiteral(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }
}

/// The response side of one proxied request: the head through a promise, the body as an
/// async sequence that asks the channel for more only while its consumer keeps up.
final class ProxiedResponseHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    typealias Body = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Demand
    >

    struct Received: Sendable {
        var head: HTTPResponseHead
        var body: Body
    }

    /// Relays the consumer's demand and its going away to the channel, on its event loop.
    struct Demand: NIOAsyncSequenceProducerDelegate {
        let handler: NIOLoopBound<ProxiedResponseHandler>

        func produceMore() {
            handler.eventLoop.execute { handler.value.resume() }
        }

        func didTerminate() {
            handler.eventLoop.execute { handler.value.context?.close(promise: nil) }
        }
    }

    private var received: EventLoopPromise<Received>?
    private var source: Body.Source?
    private var context: ChannelHandlerContext?
    private var wantsMore = true
    private var heldRead = false
    private var ended = false

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Called on the event loop before the request is written. A connection that already
    /// ended (the proxy closed it at once) fails the promise now, not at the deadline.
    func start(_ promise: EventLoopPromise<Received>) {
        guard !ended, context?.channel.isActive == true else {
            promise.fail(HTTPClientError.remoteConnectionClosed)
            return
        }
        received = promise
    }

    func read(context: ChannelHandlerContext) {
        if wantsMore {
            context.read()
        } else {
            heldRead = true
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // 1xx answers (100 Continue) come before the real one.
            guard head.status.code >= 200, let promise = received else { return }
            received = nil
            let producer = Body.makeSequence(
                backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: true,
                delegate: Demand(handler: NIOLoopBound(self, eventLoop: context.eventLoop))
            )
            source = producer.source
            promise.succeed(Received(head: head, body: producer.sequence))
        case .body(let buffer):
            switch source?.yield(buffer) {
            case .stopProducing: wantsMore = false
            case .dropped: context.close(promise: nil)
            case .produceMore, nil: break
            }
        case .end:
            ended = true
            source?.finish()
            source = nil
            context.close(promise: nil)
        }
    }

    func resume() {
        wantsMore = true
        if heldRead, let context {
            heldRead = false
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? IdleStateHandler.IdleStateEvent, event == .read {
            fail(HTTPClientError.readTimeout, context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !ended { fail(HTTPClientError.remoteConnectionClosed, context: context) }
        context.fireChannelInactive()
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        received?.fail(error)
        received = nil
        source?.finish(error)
        source = nil
        ended = true
        context.close(promise: nil)
    }
}
