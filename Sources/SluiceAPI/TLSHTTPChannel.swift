import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// Every route over TLS 1.2/1.3 with ALPN: `h2` gets HTTP/2, `http/1.1` or no ALPN at all
/// gets HTTP/1.1 — the same responder either way. Hummingbird's `http2Upgrade` does the
/// same with one fixed context; this one takes the context `certificate` holds at each
/// accept, so a SIGHUP renewal reaches new connections without a restart. A handshake that
/// has not finished within `handshakeTimeout` is closed (a slot held by a client that never
/// speaks TLS). A plain-http request to this port fails the handshake and is not answered.
/// `HTTP1` is the HTTP/1.1 channel after the handshake: Hummingbird's, or one that also
/// upgrades `/jsonrpc` to aria2's WebSocket (`wss://`).
struct TLSHTTPChannel<HTTP1: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1.Value, HTTP2Channel.Value>>
        let channel: any Channel
    }

    let certificate: ServerCertificate
    let handshakeTimeout: TimeAmount
    let http1: HTTP1
    let http2: HTTP2Channel
    /// The deadline of an HTTP/2 connection with no open stream, added after HTTP/2's own
    /// handlers, where the stream events reach it.
    let http2Deadline: @Sendable () -> HTTP2IdleDeadlineHandler

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let quiesce = QuiesceBeforeNegotiation()
            try channel.pipeline.syncOperations.addHandler(quiesce)
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: certificate.current))
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<
                NIONegotiatedHTTPVersion<HTTP1.Value, HTTP2Channel.Value>
            > { result in
                switch result {
                case .negotiated("h2"):
                    return http2.setup(channel: channel, logger: logger).flatMapThrowing { value in
                        try channel.pipeline.syncOperations.addHandler(http2Deadline())
                        return .http2(value)
                    }
                case .negotiated("http/1.1"), .fallback:
                    return http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
                case .negotiated:
                    return channel.close().flatMap { channel.eventLoop.makeFailedFuture(NIOHTTP2Errors.invalidALPNToken()) }
                }
            }
            try channel.pipeline.syncOperations.addHandler(negotiation)
            let negotiated = negotiation.protocolNegotiationResult
            let deadline = channel.eventLoop.scheduleTask(in: handshakeTimeout) { channel.close(promise: nil) }
            let bound = NIOLoopBound(quiesce, eventLoop: channel.eventLoop)
            negotiated.whenComplete { _ in
                deadline.cancel()
                bound.value.negotiated(channel: channel)
            }
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection):
                await http1.handle(value: connection, logger: logger)
            case .http2(let connection):
                await http2.handle(value: connection, logger: logger)
            }
        } catch {
            logger.debug("TLS connection ended before a protocol was agreed: \(error)")
        }
    }
}

/// A graceful shutdown asks every connection to quiesce once. Before a protocol is agreed
/// nothing else in the pipeline hears it, so a handshake in progress would hold the
/// shutdown for the handshake deadline: such a connection closes at once. One that agrees
/// its protocol after the request gets the event again, for HTTP/1 or HTTP/2 to finish.
final class QuiesceBeforeNegotiation: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private var asked = false
    private var agreed = false

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            asked = true
            if !agreed {
                context.close(promise: nil)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    /// Called on the event loop once ALPN is settled.
    func negotiated(channel: any Channel) {
        agreed = true
        if asked { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }
}
