public import Hummingbird
public import NIOCore

/// The request context of every Sluice route: Hummingbird's basic one, plus the connection
/// the request came on (an HTTP/2 stream's channel over TLS), so that a route may end it:
/// an event stream whose client stopped reading is closed rather than buffered for.
public struct SluiceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel
    /// The digest of the named token that authorized the request (`BearerAuthMiddleware`);
    /// nil for the service's own token or none. What the request opens (an event stream)
    /// ends when that token is revoked.
    public var namedToken: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
