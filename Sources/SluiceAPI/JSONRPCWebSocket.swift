import Aria2RPC
import HTTPTypes
import HummingbirdWebSocket
import JobService
import Logging
import NIOCore
import NIOWebSocket
import SluiceCore

/// `ws://HOST:PORT/jsonrpc`: aria2's JSON-RPC over WebSocket, as aria2p's listener and
/// AriaNg use it. Each text frame is a call or a batch, answered in a text frame; every job
/// change aria2 tells about goes to every client as a notification (only GIDs: a client
/// without the token learns no more than that something changed). The upgrade needs no
/// header (browsers cannot send one); the host and cross-site checks of every route apply
/// (an `--allowed-origins` page's included, as for `POST /jsonrpc`).
struct JSONRPCWebSocket: Sendable {
    let methods: Aria2Methods
    /// The notifications every client gets, decided once for all of them.
    let notifications: Aria2NotificationHub
    let allowedHosts: Set<String>?
    var crossOrigin = CrossOriginPolicy([])

    /// A frame, or a message of several, is bounded like a POST body.
    static let maximumMessageSize = 1 << 20

    func shouldUpgrade(_ request: HTTPRequest) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first == "/jsonrpc" else { return .dontUpgrade }
        guard BrowserGuardMiddleware<SluiceRequestContext>.misdirection(host: request.authority, allowedHosts: allowedHosts) == nil
        else { return .dontUpgrade }
        if let origin = request.headerFields[.origin],
            !BrowserGuardMiddleware<SluiceRequestContext>.isSameOrigin(origin, host: request.authority),
            !crossOrigin.allows(origin)
        {
            return .dontUpgrade
        }
        let methods = methods
        let hub = notifications
        return .upgrade([:]) { inbound, outbound, _ in
            // Joined before the first call is read: a client whose call was answered has
            // every notification from then on.
            let (id, notifications) = hub.join()
            defer { hub.leave(id) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Self.notify(notifications, outbound) }
                defer { group.cancelAll() }
                for try await message in inbound.messages(maxSize: Self.maximumMessageSize) {
                    guard case .text(let text) = message else { continue }
                    try await outbound.write(.text(await Self.answer(text, methods).text))
                }
            }
        }
    }

    static func answer(_ text: String, _ methods: Aria2Methods) async -> JSONValue {
        do {
            return await methods.answer(try Aria2Body.parse(Array(text.utf8))).response
        } catch {
            return Aria2Response.error(error, id: .null)
        }
    }

    /// Sends the notifications of job changes until the client goes, or falls too far
    /// behind (its queue in the hub is bounded: its connection then ends).
    static func notify(_ notifications: AsyncStream<String>, _ outbound: WebSocketOutboundWriter) async throws {
        for await text in notifications {
            try await outbound.write(.text(text))
        }
        guard !Task.isCancelled else { return }
        try await outbound.close(.goingAway, reason: "notifications ended: the client fell behind or the service is stopping")
    }
}
