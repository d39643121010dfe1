import NIOCore
import NIOHTTP2

/// Closes an HTTP/2 connection that has no open stream for too long, whatever its peer
/// does (docs/security.md, "Connections"). Hummingbird's idle timer sends GOAWAY and a PING
/// and closes once the PING is answered: a peer that never answers held its connection,
/// and its slot under `--max-connections`, for good. Here a new connection must open a
/// stream within `firstStreamTimeout`, and one whose streams have all closed is closed
/// `idleTimeout` later (the idle timer's time plus the time its PING may take).
/// Streams are counted from the events `NIOHTTP2Handler` sends down the pipeline.
final class HTTP2IdleDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let firstStreamTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var openStreams = Set<HTTP2StreamID>()
    private var deadline: Scheduled<Void>?

    init(firstStreamTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.firstStreamTimeout = firstStreamTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, after: firstStreamTimeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if deadline == nil { arm(context, after: firstStreamTimeout) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            openStreams.insert(created.streamID)
            disarm()
        case let closed as StreamClosedEvent:
            if openStreams.remove(closed.streamID) != nil, openStreams.isEmpty { arm(context, after: idleTimeout) }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func arm(_ context: ChannelHandlerContext, after delay: TimeAmount) {
        disarm()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: delay) {
            loopBound.value.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
