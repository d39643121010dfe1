import NIOCore
import NIOHTTPTypes

/// Closes connections that hold a slot without using it (docs/security.md, "Connections"): a
/// new connection must send its request head within `headTimeout`; a keep-alive connection with
/// no request in progress is closed after `idleTimeout`. A request in progress, however long
/// (an SSE stream, a slow download), is never timed out here.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let headTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var requestsInProgress = 0
    private var deadline: Scheduled<Void>?

    init(headTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, after: headTimeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context, after: headTimeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            requestsInProgress += 1
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInProgress = max(0, requestsInProgress - 1)
            if requestsInProgress == 0 { arm(context, after: idleTimeout) }
        }
        context.write(data, promise: promise)
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
