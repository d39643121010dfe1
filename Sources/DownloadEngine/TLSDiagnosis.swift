import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SluiceCore
import SwiftASN1
import X509

/// After a handshake failed on the certificate, one more handshake to the same address
/// with verification off, only to read the certificate the server presents and tell the
/// user what is wrong with it. It sends nothing but the handshake, to the address the
/// failed connection went to (already checked against the target policy), and gives up
/// after a few seconds.
enum TLSDiagnosis {
    static func leafCertificate(host: String, connectTo address: String, port: Int) async -> Certificate? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let serverName = IPAddress(host: host) == nil ? host : nil
        let group = DataPlane.eventLoopGroup
        let promise = group.next().makePromise(of: NIOSSLCertificate?.self)
        let bootstrap = ClientBootstrap(group: promise.futureResult.eventLoop)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                    try channel.pipeline.syncOperations.addHandler(tls)
                    // Once the handshake is done: the peer's leaf.
                    try channel.pipeline.syncOperations.addHandler(
                        ProbeAnswer<ByteBuffer, NIOSSLCertificate>(
                            promise: promise,
                            event: { context, event in
                                guard case TLSUserEvent.handshakeCompleted = event else { return nil }
                                return (try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self))?.peerCertificate
                            })
                    )
                }
            }
        guard let channel = try? await bootstrap.connect(host: address, port: port).get() else {
            promise.succeed(nil)
            return nil
        }
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount.seconds(5)) { promise.succeed(nil) }
        let certificate = try? await promise.futureResult.get()
        timer.cancel()
        try? await channel.close()
        guard let found = certificate ?? nil, let der = try? found.toDERBytes() else { return nil }
        return try? Certificate(derEncoded: der)
    }
}
