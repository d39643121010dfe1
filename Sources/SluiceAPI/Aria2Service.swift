import Foundation
public import JobService

/// aria2's RPC for one service: the methods over its jobs, shared by `POST /jsonrpc` (the
/// router) and the WebSocket on the same path (the server's upgrade), so that both keep
/// the same removed results and session.
public struct Aria2Service: Sendable {
    let methods: Aria2Methods
    let allowedHosts: Set<String>?
    let crossOrigin: CrossOriginPolicy
    /// The WebSocket clients' notifications: a Service of the service's group.
    public let notifications: Aria2NotificationHub

    /// - Parameter shutdown: what `aria2.shutdown` calls when `--rpc-allow-shutdown` lets it.
    public init(
        jobs: any JobService, configuration: APIConfiguration, tokens: TokenRegistry, shutdown: RPCShutdown = RPCShutdown()
    ) {
        methods = Aria2Methods(
            jobs: jobs, documents: URL(fileURLWithPath: configuration.documentsDirectory).standardizedFileURL.path, tokens: tokens,
            shutdown: configuration.rpcAllowShutdown ? shutdown : nil)
        allowedHosts = configuration.hostCheck
        notifications = Aria2NotificationHub(jobs: jobs)
        crossOrigin = CrossOriginPolicy(configuration.allowedOrigins)
    }

    var webSocket: JSONRPCWebSocket {
        JSONRPCWebSocket(methods: methods, notifications: notifications, allowedHosts: allowedHosts, crossOrigin: crossOrigin)
    }
}
