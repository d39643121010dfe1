import SluiceSystem
public import HTTPTypes
public import Hummingbird
public import CoreMetrics
import Foundation
import Metrics
import NIOCore
import SluiceCore
import SluiceHTTP

/// The built-in HTTP origin: `/files/PATH` from a directory and `/testdata/SIZE` generated,
/// both with RFC 9110 range and conditional semantics, the latter with fault injection.
public struct RangeOrigin: Sendable {
    private let root: FileRoot
    private let faultCounters = FaultCounters()
    private let openFiles = OpenFileCache()
    /// SHA-256 of `/files` by file version and of `/testdata` by content, for `Repr-Digest`.
    let fileDigests = DigestCache<OpenFile.Identity>()
    let testDataDigests = DigestCache<TestDataDigestKey>()
    let bytesServed: Counter
    /// Answers sent by the event-loop fast path (`sendfile`), the rest went through the router.
    let fastAnswers: Counter

    /// - Parameters:
    ///   - root: the directory `/files/` serves; it must exist.
    ///   - metrics: where `sluice_origin_bytes_served_total` is counted.
    public init(root: String, metrics: any MetricsFactory = MetricsSystem.factory) throws {
        self.root = try FileRoot(path: root)
        self.bytesServed = Counter(label: "sluice_origin_bytes_served_total", dimensions: [], factory: metrics)
        self.fastAnswers = Counter(label: "sluice_origin_sendfile_responses_total", dimensions: [], factory: metrics)
    }

    /// Adds `GET` and `HEAD` for `/files/**` and `/testdata/:size` to `router`.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("/files/**") { request, _ in try self.serveFile(request) }
        router.head("/files/**") { request, _ in try self.serveFile(request) }
        router.get("/testdata/:size") { request, context in try await self.serveTestData(request, context: context) }
        router.head("/testdata/:size") { request, context in try await self.serveTestData(request, context: context) }
    }

    /// A handler for one connection that answers plain file requests on the event loop
    /// with `sendfile` (see `FileFastPathHandler`); put it in the server's pipeline after
    /// the HTTP codec.
    /// - Parameters:
    ///   - admits: whether the service would let this request through to `/files/` (its
    ///     host and token checks); others go on to the router, which refuses them.
    ///   - extraHeaders: added to every answer (`Server`, say).
    ///   - answered: told of every answer, with its status and how long it took to start.
    public func fileFastPath(
        admits: @escaping @Sendable (HTTPRequest) -> Bool, extraHeaders: HTTPFields = [:],
        answered: @escaping @Sendable (HTTPResponse.Status, Duration) -> Void = { _, _ in }
    ) -> FileFastPathHandler {
        FileFastPathHandler(origin: self, admits: admits, extraHeaders: extraHeaders, answered: answered)
    }

    // MARK: Files

    func serveFile(_ request: Request) throws -> Response {
        let now = Int64(time(nil))
        guard let encoded = request.uri.path.bytesAfter(prefix: "/files/"),
            let cached = lookUpFile(encodedPath: encoded, now: now)
        else {
            throw SluiceError(.notFound, "no such file")
        }
        let wantsDigest = Self.wantsReprDigest(request.headers)
        var response = RangeResponder.respond(
            to: request, representation: cached.representation(now: now),
            source: FileByteSource(file: cached.file, bytesServed: bytesServed),
            reprDigest: wantsDigest ? { self.reprDigest(of: cached.file) } : nil
        )
        response.headers.append(contentsOf: Self.fileSafetyHeaders)
        return response
    }

    /// A downloaded page must never run as this origin: no sniffing, and a sandbox that
    /// keeps scripts and forms from acting if a browser renders it.
    static let fileSafetyHeaders: HTTPFields = [.xContentTypeOptions: "nosniff", .contentSecurityPolicy: "sandbox"]

    /// The open file a `/files/` path names, and what the origin knows of it; nil when
    /// there is no such file under the root. `now` is the request's time, in seconds.
    func lookUpFile(encodedPath: Substring, now: Int64) -> OpenFileCache.CachedFile? {
        openFiles.file(encoded: encodedPath, in: root, now: now)
    }

    // MARK: Test data

    func serveTestData(_ request: Request, context: some RequestContext) async throws -> Response {
        let sizeText = context.parameters.get("size") ?? ""
        let options = try TestDataOptions(size: sizeText[...], query: request.uri.queryParameters)
        if let delay = options.delayMilliseconds {
            try await Task.sleep(for: .milliseconds(delay))
        }
        if let status = options.status, faultCounters.next(request.uri.string) <= options.times {
            var headers: HTTPFields = [:]
            if let retry = options.retryAfter { headers[.retryAfter] = String(retry) }
            // 204, 205 and 304 carry no content (RFC 9110 §15.3.5, §15.3.6, §15.4.5): bytes
            // after their head would be read as the start of the next response.
            guard ![204, 205, 304].contains(status) else {
                if status == 205 { headers[.contentLength] = "0" }
                return Response(status: HTTPResponse.Status(code: status), headers: headers)
            }
            headers[.contentType] = "text/plain; charset=utf-8"
            return Response(
                status: HTTPResponse.Status(code: status), headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: "injected status \(status)\n"))
            )
        }
        if let expires = options.expires, Int64(Date().timeIntervalSince1970) >= expires {
            return Self.expiredAnswer(expires: expires)
        }
        if let redirects = options.redirects, redirects > 0 {
            let location = request.uri.path + "?" + Self.query(request.uri.query ?? "", settingRedirectTo: redirects - 1)
            return Response(status: .found, headers: [.location: location, .contentLength: "0"])
        }
        let rangesEnabled = !options.noRange && !options.noLength
        let representation = Representation(
            length: options.noLength ? nil : options.size,
            validators: Validators(etag: options.entityTag, lastModified: TestDataOptions.lastModified),
            contentType: MediaType.octetStream, rangesEnabled: rangesEnabled,
            advertiseRanges: rangesEnabled
        )
        let source = TestDataByteSource(
            content: TestDataContent(seed: options.seed), size: options.size, rate: options.rate,
            cuts: options.cuts, corrupt: options.corrupt, bytesServed: bytesServed
        )
        // Generated data announces its digest only when asked to (`digest=1`, or a wrong one
        // with `baddigest=1`): a test of a remote without digests gets none.
        let announces = options.digest || options.badDigest
        var response = RangeResponder.respond(
            to: request, representation: representation, source: source,
            reprDigest: announces ? { self.reprDigest(ofTestData: options) } : nil
        )
        for link in options.links {
            response.headers.append(HTTPField(name: Self.linkField, value: "<\(link)>; rel=duplicate"))
        }
        return response
    }

    static let linkField = HTTPField.Name("Link")!

    /// What S3 answers a presigned URL past its `X-Amz-Expires`: 403 with an XML error.
    static func expiredAnswer(expires: Int64) -> Response {
        let format = ISO8601DateFormatter()
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>AccessDenied</Code><Message>Request has expired</Message>\
            <Expires>\(format.string(from: Date(timeIntervalSince1970: TimeInterval(expires))))</Expires>\
            <ServerTime>\(format.string(from: Date()))</ServerTime></Error>

            """
        return Response(
            status: .forbidden, headers: [.contentType: "application/xml", .contentLength: String(body.utf8.count)],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func query(_ query: String, settingRedirectTo value: Int) -> String {
        query.split(separator: "&").map { $0.hasPrefix("redirect=") ? "redirect=\(value)" : String($0) }
            .joined(separator: "&")
    }
}
