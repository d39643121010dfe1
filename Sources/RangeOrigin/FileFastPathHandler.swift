import SluiceSystem
import HTTPTypes
public import NIOCore
import NIOHTTP1
public import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import SluiceCore
import CoreMetrics
import Foundation

/// Answers the origin's hot path on the event loop, ahead of Hummingbird: a `GET` of a
/// file under `/files/` for the whole file or one range, sent with `sendfile` (a NIO
/// `FileRegion`) from the open-file cache. No task, no copy into user space.
///
/// Everything else goes on to Hummingbird unchanged, and so does any request this handler
/// is not sure of: other methods and paths, a request with a body or a connection
/// option other than `close` and `keep-alive`, one the service's admission rule (host and token) would not let through, any
/// answer but 200 or a single 206 (304, 412, 416, multipart, 404), one that wants a
/// `Repr-Digest` the origin does not know yet (the router computes it, which can take long
/// and must not happen on the event loop; once known, the digest is sent from here too),
/// and any request that arrives while Hummingbird is still answering an earlier one on the
/// connection, so that answers keep their order. Both decide with `RangeDecision`, so they
/// answer alike.
///
/// It sits after Hummingbird's HTTP/1 codec (HTTPTypes parts); the file body is written
/// through the codec's own context as an HTTP/1 `FileRegion` part, which the codec has no
/// HTTPTypes form for. While a file is being sent it reads nothing more from the
/// connection, so a pipelined request waits its turn and memory stays bounded.
public final class FileFastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private let origin: RangeOrigin
    private let admits: @Sendable (HTTPRequest) -> Bool
    private let extraHeaders: HTTPFields
    private let answered: @Sendable (HTTPResponse.Status, Duration) -> Void
    /// Requests handed to Hummingbird whose answers have not ended yet.
    private var forwarded = 0
    /// The current request is answered here: its remaining parts are dropped.
    private var answering = false
    /// A file is still being sent: reads wait, and parts already read queue up.
    private var sending = false
    private var readPending = false
    private var queued: [HTTPRequestPart] = []
    private var heldEvents: [Any] = []
    private var codec: ChannelHandlerContext?
    private var date = (second: Int64(-1), text: "")
    /// The Host and Authorization of the last request admitted on this connection: a
    /// keep-alive client sends the same ones each time, and they need checking once.
    private var admitted: (host: String?, authorization: String?)?

    /// - Parameters:
    ///   - admits: whether the service would let this request reach the origin's route
    ///     (host check, token); a request it does not admit goes on to Hummingbird, which
    ///     refuses it the usual way.
    ///   - extraHeaders: added to every answer (what the service's middleware adds, such as
    ///     `Server`).
    init(
        origin: RangeOrigin, admits: @escaping @Sendable (HTTPRequest) -> Bool, extraHeaders: HTTPFields,
        answered: @escaping @Sendable (HTTPResponse.Status, Duration) -> Void
    ) {
        self.origin = origin
        self.admits = admits
        self.extraHeaders = extraHeaders
        self.answered = answered
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        codec = try? context.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self)
        // NIO's default high-water mark is 64 KiB: every 64 KiB range would make the channel
        // unwritable and writable again, waking Hummingbird's writer each time for nothing.
        _ = context.channel.setOption(.writeBufferWaterMark, value: .init(low: 256 << 10, high: 1 << 20))
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if sending {
            queued.append(part)
        } else {
            handle(part, context: context)
        }
    }

    private func handle(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let request):
            let start = ContinuousClock.now
            if forwarded == 0, let answer = fastAnswer(request) {
                answering = true
                send(answer, context: context)
                origin.fastAnswers.increment()
                answered(answer.head.status, ContinuousClock.now - start)
            } else {
                forwarded += 1
                context.fireChannelRead(wrapInboundOut(part))
            }
        case .body:
            if !answering { context.fireChannelRead(wrapInboundOut(part)) }
        case .end:
            if answering {
                answering = false
            } else {
                context.fireChannelRead(wrapInboundOut(part))
            }
        }
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { forwarded = max(0, forwarded - 1) }
        context.write(data, promise: promise)
    }

    public func read(context: ChannelHandlerContext) {
        if sending {
            readPending = true
        } else {
            context.read()
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        queued.removeAll()
        heldEvents.removeAll()
        context.fireChannelInactive()
    }

    /// The end of the client's input (a half-close after its request) and a graceful
    /// shutdown's quiesce wait while a file is being sent: Hummingbird, which never saw this
    /// request, would close the connection at once and cut the body short.
    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let held = event is ChannelShouldQuiesceEvent || (event as? ChannelEvent) == .inputClosed
        if held, sending || !queued.isEmpty {
            heldEvents.append(event)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    // MARK: The answer

    private struct Answer {
        var head: HTTPResponse
        var file: OpenFile
        var range: Range<Int64>
        var closes: Bool
    }

    private func fastAnswer(_ request: HTTPRequest) -> Answer? {
        guard codec != nil, request.method == .get, let path = request.path, let afterFiles = path.bytesAfter(prefix: "/files/"),
            request.headerFields[.contentLength] == nil, request.headerFields[.transferEncoding] == nil,
            request.headerFields[.expect] == nil, let closes = Self.closesConnection(request), isAdmitted(request)
        else { return nil }
        // Cut at the `?` scalar, without a copy (a `?` that a combining mark follows is one
        // character with it).
        let encoded = Substring(afterFiles.unicodeScalars.prefix { $0 != "?" })
        // One clock reading per request: validators, the cache and Date agree.
        let now = Int64(time(nil))
        guard let cached = origin.lookUpFile(encodedPath: encoded, now: now) else { return nil }
        let file = cached.file
        let representation = cached.representation(now: now)
        var fields = cached.headers
        let range: Range<Int64>
        let status: HTTPResponse.Status
        switch RangeDecision.decide(
            request.headerFields.conditionalHeaders, rangeHeader: request.headerFields.singleRangeHeader, isHead: false,
            representation: representation
        ) {
        case .whole:
            status = .ok
            range = 0..<file.size
        case .single(let byteRange, let length):
            status = .partialContent
            fields[.contentRange] = ContentRange.range(byteRange, completeLength: length).headerValue
            range = byteRange.first..<(byteRange.last + 1)
        case .preconditionFailed, .notModified, .unsatisfiable, .multipart:
            return nil
        }
        if RangeOrigin.wantsReprDigest(request.headerFields) {
            guard let digest = origin.fileDigests.cached(file.identity) else { return nil }
            fields[.reprDigest] = ReprDigest.field(sha256: digest)
        }
        fields[.contentLength] = String(range.count)
        fields[.date] = httpDate(now)
        fields.append(contentsOf: extraHeaders)
        return Answer(head: HTTPResponse(status: status, headerFields: fields), file: file, range: range, closes: closes)
    }

    private func isAdmitted(_ request: HTTPRequest) -> Bool {
        let key = (host: request.authority, authorization: request.headerFields[.authorization])
        if let admitted, admitted.host == key.host, admitted.authorization == key.authorization { return true }
        guard admits(request) else { return false }
        admitted = key
        return true
    }

    /// Whether the request asks to close the connection after its answer (`Connection:
    /// close`); nil for any other connection option (an upgrade, say), which the router
    /// handles.
    static func closesConnection(_ request: HTTPRequest) -> Bool? {
        var closes = false
        for value in request.headerFields[values: .connection] {
            for option in value.split(separator: ",") {
                switch option.trimmingCharacters(in: .whitespaces).lowercased() {
                case "close": closes = true
                case "keep-alive": continue
                default: return nil
                }
            }
        }
        return closes
    }

    private func send(_ answer: Answer, context: ChannelHandlerContext) {
        guard let codec else { return }
        sending = true
        context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
        let count = answer.range.count
        let file = answer.file
        let closes = answer.closes
        // A handle of its own for each response (NIO marks a handle busy while it sends
        // from it); the descriptor stays the cached file's, so it is handed back, not closed.
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: file.descriptor)
        let region = FileRegion(
            fileHandle: handle, readerIndex: Int(answer.range.lowerBound), endIndex: Int(answer.range.upperBound)
        )
        let written = context.eventLoop.makePromise(of: Void.self)
        codec.write(NIOAny(HTTPServerResponsePart.body(.fileRegion(region))), promise: written)
        codec.flush()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let watch = NIOLoopBoundBox<(done: Bool, task: RepeatedTask?)>((false, nil), eventLoop: context.eventLoop)
        written.futureResult.whenComplete { result in
            watch.value.done = true
            watch.value.task?.cancel()
            // The file stays open (the cache may have dropped it) until sendfile is done.
            withExtendedLifetime(file) { _ = try? handle.takeDescriptorOwnership() }
            let (handler, context) = loopBound.value
            if case .success = result { handler.origin.bytesServed.increment(by: count) }
            // After the body, so the connection's idle deadline starts when it is sent.
            let ended = context.writeAndFlush(handler.wrapOutboundOut(.end(nil)))
            if closes {
                ended.whenComplete { _ in loopBound.value.1.close(promise: nil) }
            } else {
                handler.finishSending(context: context)
            }
        }
        // A file cut short under a send that is still going would leave `sendfile` with
        // nothing to send and the connection waiting for ever: while the body is out,
        // check the size every second and close the connection once the file no longer
        // holds it (the router's reader does the same when a read comes up short).
        if !watch.value.done {
            let end = answer.range.upperBound
            watch.value.task = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { task in
                if !file.holds(end) {
                    task.cancel()
                    loopBound.value.1.close(promise: nil)
                }
            }
        }
    }

    private func finishSending(context: ChannelHandlerContext) {
        sending = false
        // A connection that closed under the send answers nothing more.
        guard context.channel.isActive else {
            queued.removeAll()
            return
        }
        while !sending, !queued.isEmpty {
            handle(queued.removeFirst(), context: context)
        }
        if !sending, queued.isEmpty {
            for event in heldEvents { context.fireUserInboundEventTriggered(event) }
            heldEvents.removeAll()
        }
        if !sending, readPending {
            readPending = false
            context.read()
        }
    }

    /// `Date` for `now`, formatted once a second per connection.
    private func httpDate(_ now: Int64) -> String {
        if now != date.second { date = (now, HTTPDate.format(now)) }
        return date.text
    }
}
