import NIOCore

/// The answer of a one-shot probe connection (a `CONNECT` whose status is wanted, a
/// handshake whose certificate is wanted): the first value `read` finds in what arrives or
/// `event` finds in a user event; nil when the connection fails or closes first.
final class ProbeAnswer<In, Value: Sendable>: ChannelInboundHandler {
    typealias InboundIn = In
    private let promise: EventLoopPromise<Value?>
    private let read: (In) -> Value?
    private let event: (ChannelHandlerContext, Any) -> Value?

    init(
        promise: EventLoopPromise<Value?>, read: @escaping (In) -> Value? = { _ in nil },
        event: @escaping (ChannelHandlerContext, Any) -> Value? = { _, _ in nil }
    ) {
        self.promise = promise
        self.read = read
        self.event = event
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let value = read(unwrapInboundIn(data)) { promise.succeed(value) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let value = self.event(context, event) { promise.succeed(value) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.succeed(nil)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.succeed(nil)
        context.fireChannelInactive()
    }
}
