import NIOCore
import NIOHTTPTypes

/// Closes connections that hold a slot without using it (docs/security.md, "Connections"): a
/// new connection must send its request head within `headTimeout`; a request's body must
/// have arrived whole within `bodyTimeout` of its head (a `POST /jsonrpc` whose body never
/// comes held its connection before any token was checked); a keep-alive connection with no
/// request in progress is closed after `idleTimeout`. A request in progress, once read,
/// however long its answer takes (an SSE stream, a slow download), is never timed out here.
/// On an HTTP/2 stream the same handler times that stream's one request.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    /// Requests whose answer has not ended.
    private var requestsInProgress = 0
    /// Whether a request's body is still being read.
    private var readingBody = false
    private var deadline = ScheduledClose()

    init(headTimeout: TimeAmount, bodyTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
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
        switch unwrapInboundIn(data) {
        case .head:
            requestsInProgress += 1
            readingBody = true
            arm(context, after: bodyTimeout)
        case .body:
            break
        case .end:
            readingBody = false
            // Read whole: the answer may take as long as it takes. One already sent (a
            // refusal before the body was read) leaves the connection idle.
            if requestsInProgress == 0 { arm(context, after: idleTimeout) } else { disarm() }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInProgress = max(0, requestsInProgress - 1)
            // A body still arriving keeps its own deadline.
            if requestsInProgress == 0, !readingBody { arm(context, after: idleTimeout) }
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, after delay: TimeAmount) {
        deadline.arm(context, after: delay)
    }

    private func disarm() {
        deadline.cancel()
    }
}
