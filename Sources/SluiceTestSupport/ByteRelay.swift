import NIOCore
import NIOPosix
import Synchronization

/// One end of a relay between two channels on the same event loop, for the test proxies:
/// what one channel reads, the other writes. When one side closes, the other closes once
/// what it was given is written; a side reads only while the other can take more writes.
final class ByteRelay: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: ByteRelay?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    private let onRead: (@Sendable (Int) -> Void)?

    private init(onRead: (@Sendable (Int) -> Void)?) {
        self.onRead = onRead
    }

    /// Two linked ends: `client` goes into the accepted channel, `target` into the channel
    /// to the target, whose received bytes are reported to `countingTargetBytes`.
    static func pair(countingTargetBytes: @escaping @Sendable (Int) -> Void) -> (client: ByteRelay, target: ByteRelay) {
        let client = ByteRelay(onRead: nil)
        let target = ByteRelay(onRead: countingTargetBytes)
        client.partner = target
        target.partner = client
        return (client, target)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        onRead?(buffer.readableBytes)
        partner?.context?.write(wrapOutboundOut(buffer), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.context?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.closeAfterPendingWrites()
        partner = nil
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.resumeReading() }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Holds reads while the partner's channel cannot take more writes.
    func read(context: ChannelHandlerContext) {
        if let partnerChannel = partner?.context?.channel, !partnerChannel.isWritable {
            pendingRead = true
        } else {
            context.read()
        }
    }

    private func resumeReading() {
        guard pendingRead, let context else { return }
        pendingRead = false
        context.read()
    }

    private func closeAfterPendingWrites() {
        partner = nil
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
            .assumeIsolated()
            .whenComplete { _ in context.close(promise: nil) }
    }
}

/// Every channel a test proxy accepted or opened and that is still open, so that
/// `shutdown()` can close them all; a channel tracked after that is closed at once.
final class OpenChannels: Sendable {
    private let state = Mutex<(channels: [ObjectIdentifier: any Channel], closed: Bool)>(([:], false))

    func track(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let closed = state.withLock { state in
            if !state.closed { state.channels[id] = channel }
            return state.closed
        }
        if closed {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { _ in _ = self.state.withLock { $0.channels.removeValue(forKey: id) } }
    }

    /// Listens on 127.0.0.1 with a port the kernel picks; `initialize` sets up each
    /// accepted channel's pipeline on its event loop.
    func listen(_ initialize: @escaping @Sendable (any Channel) throws -> Void) async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                self.track(channel)
                return channel.eventLoop.makeCompletedFuture { try initialize(channel) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// The address a proxy connects to IPv4 loopback targets from: not 127.0.0.1, so an
    /// origin's log tells what came through a proxy from what came direct.
    static let sourceAddress = "127.0.0.2"

    /// Opens a TCP connection from `eventLoop` (the accepted channel's, so that a relay can
    /// join the two) to the target, tracked like the accepted ones.
    func connect(on eventLoop: any EventLoop, to target: Target) -> EventLoopFuture<any Channel> {
        var bootstrap = ClientBootstrap(group: eventLoop).connectTimeout(.seconds(5))
        let loopbackV4: Bool
        switch target {
        case .hostPort(let host, _): loopbackV4 = host.hasPrefix("127.")
        case .address(let address): loopbackV4 = address.protocol == .inet && address.ipAddress?.hasPrefix("127.") == true
        }
        if loopbackV4, let source = try? SocketAddress(ipAddress: Self.sourceAddress, port: 0) {
            bootstrap = bootstrap.bind(to: source)
        }
        let connected: EventLoopFuture<any Channel>
        switch target {
        case .hostPort(let host, let port): connected = bootstrap.connect(host: host, port: port)
        case .address(let address): connected = bootstrap.connect(to: address)
        }
        return connected.map { channel in
            self.track(channel)
            return channel
        }.hop(to: eventLoop)
    }

    enum Target {
        case hostPort(String, Int)
        case address(SocketAddress)
    }

    /// Closes every open channel, `listener` first.
    func closeAll(listener: any Channel) async throws {
        try? await listener.close()
        let channels = state.withLock { state in
            state.closed = true
            return Array(state.channels.values)
        }
        for channel in channels { try? await channel.close() }
    }
}

extension ChannelHandlerContext {
    /// Writes `text` raw (the proxies answer without an HTTP encoder in the pipeline).
    func writeRaw(_ text: String, promise: EventLoopPromise<Void>? = nil) {
        writeAndFlush(NIOAny(channel.allocator.buffer(string: text)), promise: promise)
    }

    /// Writes `text` and closes the channel once it is out.
    func answerAndClose(_ text: String) {
        writeAndFlush(NIOAny(channel.allocator.buffer(string: text))).assumeIsolated().whenComplete { _ in
            self.close(promise: nil)
        }
    }
}
