import HTTPTypes
import JobService
import NIOCore
import NIOHTTPTypes

/// `GET /healthz` answered on the event loop, ahead of the router: a readiness probe gets
/// what the service last saw of its store at once, even while every thread of the
/// cooperative pool waits on a stalled store. The host check is the router's (a request it
/// would refuse goes on to the router and is refused there); no token is needed, as for the
/// route. Only when no earlier request on the connection is still being answered, so that
/// answers keep their order.
final class HealthFastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let health: StoreHealth
    private let admits: @Sendable (HTTPRequest) -> Bool
    private var forwarded = 0
    private var answering = false

    init(health: StoreHealth, admits: @escaping @Sendable (HTTPRequest) -> Bool) {
        self.health = health
        self.admits = admits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let request):
            if forwarded == 0, request.method == .get || request.method == .head, request.path == "/healthz", admits(request) {
                answering = true
                answer(request, context: context)
            } else {
                forwarded += 1
                context.fireChannelRead(data)
            }
        case .body:
            if !answering { context.fireChannelRead(data) }
        case .end:
            if answering {
                answering = false
            } else {
                context.fireChannelRead(data)
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { forwarded = max(0, forwarded - 1) }
        context.write(data, promise: promise)
    }

    private func answer(_ request: HTTPRequest, context: ChannelHandlerContext) {
        let available = health.isAvailable
        let body = ByteBuffer(string: available ? #"{"status":"ok"}"# : #"{"status":"degraded","store":"unavailable"}"#)
        var fields: HTTPFields = [
            .contentType: "application/json", .contentLength: String(body.readableBytes), .server: serverName,
            .xContentTypeOptions: "nosniff", .contentSecurityPolicy: apiPolicy,
        ]
        if request.headerFields[.connection]?.lowercased() == "close" { fields[.connection] = "close" }
        let head = HTTPResponse(status: available ? .ok : .serviceUnavailable, headerFields: fields)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if request.method == .get { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        if fields[.connection] == "close" { context.close(promise: nil) }
    }
}
