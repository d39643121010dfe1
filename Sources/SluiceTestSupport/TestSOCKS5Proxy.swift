import NIOCore
import NIOSOCKS
import Synchronization

/// A SOCKS5 server (RFC 1928) on 127.0.0.1 for tests of downloads through a SOCKS proxy:
/// "no authentication" only (0xFF to a client that does not offer it), CONNECT only (0x07
/// to other commands), to IPv4, IPv6 and domain-name targets; records what it was asked.
public final class TestSOCKS5Proxy: Sendable {
    /// The port the proxy listens on, on 127.0.0.1.
    public let port: Int
    private let log: Log
    private let listener: any Channel
    private let open: OpenChannels

    /// Starts listening on a port the kernel picks.
    public init() async throws {
        let log = Log()
        let open = OpenChannels()
        listener = try await open.listen { channel in
            try channel.pipeline.syncOperations.addHandlers(SOCKSServerHandshakeHandler(), SOCKSProxyHandler(log: log, open: open))
        }
        port = listener.localAddress?.port ?? 0
        self.log = log
        self.open = open
    }

    /// Every target asked for, as `host:port` (`[v6]:port` for IPv6), in order.
    public var targets: [String] { log.targets.withLock { $0 } }

    /// Bytes relayed from targets to clients.
    public var tunnelledBytes: Int64 { log.tunnelledBytes.load(ordering: .relaxed) }

    /// Closes the listener and every open connection, relayed ones included.
    public func shutdown() async throws {
        try await open.closeAll(listener: listener)
    }

    final class Log: Sendable {
        let targets = Mutex<[String]>([])
        let tunnelledBytes = Atomic<Int64>(0)
    }
}

/// Answers one client connection of a `TestSOCKS5Proxy`, after NIOSOCKS's handshake
/// handler has parsed its messages.
private final class SOCKSProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ClientMessage
    typealias OutboundOut = ServerMessage

    private let log: TestSOCKS5Proxy.Log
    private let open: OpenChannels
    private var inactive = false

    init(log: TestSOCKS5Proxy.Log, open: OpenChannels) {
        self.log = log
        self.open = open
    }

    func channelInactive(context: ChannelHandlerContext) {
        inactive = true
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Once closed, the handshake handler, removed before this one, hands on the raw
        // bytes it still holds, which are no `ClientMessage`.
        guard !inactive else { return }
        switch unwrapInboundIn(data) {
        case .greeting(let greeting):
            if greeting.methods.contains(.noneRequired) {
                context.writeAndFlush(wrapOutboundOut(.selectedAuthenticationMethod(.init(method: .noneRequired))), promise: nil)
            } else {
                reply(.selectedAuthenticationMethod(.init(method: .noneAcceptable)), thenClose: true, context: context)
            }
        case .request(let request):
            log.targets.withLock { $0.append(Self.describe(request.addressType)) }
            guard request.command == .connect else {
                return reply(Self.failure(0x07), thenClose: true, context: context)
            }
            let target: OpenChannels.Target
            switch request.addressType {
            case .address(let address): target = .address(address)
            case .domain(let host, let port): target = .hostPort(host, port)
            }
            open.connect(on: context.eventLoop, to: target).assumeIsolated().whenComplete { result in
                switch result {
                case .failure:
                    // 0x05: connection refused.
                    self.reply(Self.failure(0x05), thenClose: true, context: context)
                case .success(let channel):
                    self.tunnel(to: channel, context: context)
                }
            }
        case .authenticationData:
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func tunnel(to target: any Channel, context: ChannelHandlerContext) {
        let log = log
        let relay = ByteRelay.pair(countingTargetBytes: { log.tunnelledBytes.add(Int64($0), ordering: .relaxed) })
        do {
            try target.pipeline.syncOperations.addHandler(relay.target)
            let bound = target.localAddress.map { SOCKSAddress.address($0) } ?? Self.unspecified
            reply(.response(.init(reply: .succeeded, boundAddress: bound)), thenClose: false, context: context)
            // The relay joins at the end; then this handler and the handshake handler leave,
            // the latter handing any bytes it holds on to the relay.
            let pipeline = context.pipeline.syncOperations
            try pipeline.addHandler(relay.client)
            let handshake = try pipeline.handler(type: SOCKSServerHandshakeHandler.self)
            pipeline.removeHandler(context: context, promise: nil)
            pipeline.removeHandler(handshake, promise: nil)
        } catch {
            target.close(promise: nil)
            context.close(promise: nil)
        }
    }

    private func reply(_ message: ServerMessage, thenClose: Bool, context: ChannelHandlerContext) {
        let written = context.writeAndFlush(wrapOutboundOut(message))
        if thenClose { written.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
    }

    /// 0.0.0.0:0, the bound address of a failure reply.
    private static let unspecified = SOCKSAddress.address(try! SocketAddress(ipAddress: "0.0.0.0", port: 0))

    private static func failure(_ code: UInt8) -> ServerMessage {
        .response(.init(reply: .init(value: code), boundAddress: unspecified))
    }

    private static func describe(_ address: SOCKSAddress) -> String {
        switch address {
        case .domain(let host, let port): return "\(host):\(port)"
        case .address(let address):
            let host = address.ipAddress ?? "?"
            return address.protocol == .inet6 ? "[\(host)]:\(address.port ?? 0)" : "\(host):\(address.port ?? 0)"
        }
    }
}
