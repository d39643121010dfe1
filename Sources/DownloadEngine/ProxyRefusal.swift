import NIOCore
import NIOHTTP1
import NIOPosix

/// AsyncHTTPClient reports any answer but 200 to its `CONNECT` as one error without the
/// status. When that happens, one more `CONNECT` to the same proxy reads the status line,
/// so the user is told what the proxy said ("403 Forbidden": its rules allow no tunnel to
/// that port) and a refusal fails at once instead of being retried like a drop.
enum ProxyRefusal {
    static func connectStatus(
        proxyHost: String, proxyPort: Int, target: URLOrigin, authorization: String?
    ) async -> HTTPResponseStatus? {
        let promise = DataPlane.eventLoopGroup.next().makePromise(of: HTTPResponseStatus?.self)
        let bootstrap = ClientBootstrap(group: promise.futureResult.eventLoop)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        ProbeAnswer<HTTPClientResponsePart, HTTPResponseStatus>(promise: promise) { part in
                            if case .head(let head) = part { return head.status }
                            return nil
                        }
                    )
                }
            }
        guard let channel = try? await bootstrap.connect(host: proxyHost, port: proxyPort).get() else {
            promise.succeed(nil)
            return nil
        }
        let authority = (target.host.contains(":") ? "[\(target.host)]" : target.host) + ":\(target.port)"
        var headers = HTTPHeaders([("Host", authority)])
        if let authorization { headers.add(name: "Proxy-Authorization", value: authorization) }
        let head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: authority, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        let timer = channel.eventLoop.scheduleTask(in: .seconds(5)) { promise.succeed(nil) }
        let status = try? await promise.futureResult.get()
        timer.cancel()
        try? await channel.close()
        return status ?? nil
    }
}
