import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Times a new connection's first request head in bytes, ahead of any HTTP parsing: the
/// WebSocket upgrade pipeline parses that head before `ConnectionDeadlineHandler` is in
/// place, so a client that sends half a head (or nothing) would otherwise hold its slot for
/// good. Once the head's blank line has arrived, the handler leaves the pipeline and
/// `ConnectionDeadlineHandler` times what follows.
final class FirstHeadDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private let logger: Logger
    private var deadline: Scheduled<Void>?
    /// Where the bytes so far stand against the blank line that ends a head; it may arrive
    /// split over reads.
    private var scanner = HeadEndScanner()
    private var sawFirstBytes = false

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if deadline == nil { arm(context) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if !sawFirstBytes, bytes.readableBytes > 0 {
            sawFirstBytes = true
            // A TLS handshake (a record of type 22, version 3.x) on the plain port: one line
            // that says so, and the connection closed, instead of the HTTP parser's and the
            // upgrade's errors for each of its bytes.
            if bytes.readableBytes >= 2, bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) == 0x16,
                bytes.getInteger(at: bytes.readerIndex + 1, as: UInt8.self) == 0x03
            {
                let peer = context.channel.remoteAddress?.ipAddress ?? "a client"
                logger.notice(
                    "a TLS handshake came to this plain-HTTP port from \(peer): use http:// with it, or serve TLS with --tls-cert")
                // As a peer that half-closed: the upgrade then ends quietly (a closed channel
                // would be logged as an error of its own).
                context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
                context.close(promise: nil)
                return
            }
        }
        scanner.scan(bytes.readableBytesView)
        context.fireChannelRead(data)
        if scanner.ended { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    private func arm(_ context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            loopBound.value.close(promise: nil)
        }
    }
}

/// A server child channel with `FirstHeadDeadlineHandler` first in its pipeline, and
/// `FirstRequestParseErrorHandler` after what the inner channel sets up.
struct FirstHeadDeadlineChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let headTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(FirstHeadDeadlineHandler(timeout: headTimeout, logger: logger))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(FirstRequestParseErrorHandler())
            return value
        }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Finds the end of a request head: an empty line, ended by LF or CRLF as HTTP parsers take
/// it, after a request line. Empty lines before the request line do not count: the parser
/// skips them, so a client sending only `\r\n\r\n` has not sent a head.
public struct HeadEndScanner: Sendable {
    public private(set) var ended = false
    private var atLineStart = false
    private var sawContent = false

    public init() {}

    public mutating func scan(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            if ended { return }
            switch byte {
            case UInt8(ascii: "\n"):
                if atLineStart, sawContent { ended = true }
                atLineStart = true
            case UInt8(ascii: "\r"): continue
            default:
                atLineStart = false
                sawContent = true
            }
        }
    }
}

/// Answers 400 to a first request the HTTP parser refuses (`M7THOD / HTTP/1.1`), as the plain
/// HTTP/1 pipeline does: behind the WebSocket upgrade, that parse happens before
/// Hummingbird's handlers are in place, and nothing else would answer. It leaves the
/// pipeline at the first thing read past it (a request that parsed, or a WebSocket's bytes).
final class FirstRequestParseErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let head = HTTPResponseHead(
            version: .http1_1, status: .badRequest, headers: ["Connection": "close", "Content-Length": "0"]
        )
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
    }
}
