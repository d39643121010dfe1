import NIOCore
import NIOHTTP2

/// Closes an HTTP/2 connection that has no open stream for too long, whatever its peer
/// does (docs/security.md, "Connections"). Hummingbird's idle timer sends GOAWAY and a PING
/// and closes once the PING is answered: a peer that never answers held its connection,
/// and its slot under `--max-connections`, for good. Here a new connection must open a
/// stream within `firstStreamTimeout`, and one whose streams have all closed is closed
/// `idleTimeout` later (the idle timer's time plus the time its PING may take).
///
/// Streams are counted from their own side (`HTTP2StreamCounter`, in each stream's
/// pipeline): the inline multiplexer tells its stream events to Hummingbird's connection
/// manager alone, not down the connection's pipeline.
final class HTTP2IdleDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let firstStreamTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var openStreams = 0
    private var deadline = ScheduledClose()
    private var context: ChannelHandlerContext?

    init(firstStreamTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.firstStreamTimeout = firstStreamTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive, openStreams == 0 { arm(after: firstStreamTimeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if !deadline.isArmed, openStreams == 0 { arm(after: firstStreamTimeout) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
        self.context = nil
    }

    /// A stream of this connection began (on its event loop).
    func streamOpened() {
        openStreams += 1
        disarm()
    }

    /// A stream of this connection ended (on its event loop).
    func streamClosed() {
        openStreams = max(0, openStreams - 1)
        if openStreams == 0 { arm(after: idleTimeout) }
    }

    private func arm(after delay: TimeAmount) {
        guard let context else { return }
        deadline.arm(context, after: delay)
    }

    private func disarm() {
        deadline.cancel()
    }
}

/// In each HTTP/2 stream's pipeline: tells the connection's `HTTP2IdleDeadlineHandler` that
/// the stream began and, once, that it ended. A stream shares its connection's event loop.
final class HTTP2StreamCounter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private var connection: HTTP2IdleDeadlineHandler?

    func handlerAdded(context: ChannelHandlerContext) {
        guard let parent = context.channel.parent, parent.eventLoop.inEventLoop,
            let handler = try? parent.pipeline.syncOperations.handler(type: HTTP2IdleDeadlineHandler.self)
        else { return }
        connection = handler
        handler.streamOpened()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        ended()
    }

    private func ended() {
        connection?.streamClosed()
        connection = nil
    }
}
