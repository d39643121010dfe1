import Aria2RPC
import Hummingbird
import HTTPTypes
import NIOCore
import SluiceCore

/// `POST /jsonrpc`: aria2's JSON-RPC 2.0 (one call or a batch) on the same jobs as the REST
/// API, for AriaNg, aria2p and the browser extensions. Any or no `Content-Type`, as aria2's
/// clients send; the token travels in each call (`Aria2Methods`). `OPTIONS /jsonrpc` answers
/// a browser's CORS preflight; a listed origin's page may read the answers.
struct JSONRPCController {
    let methods: Aria2Methods
    var crossOrigin = CrossOriginPolicy([])

    /// A batch of calls is bounded by its bytes.
    static let maximumBodySize = 1 << 20

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.post("/jsonrpc") { request, _ in
            var response = try await answer(request)
            response.headers.append(contentsOf: crossOrigin.responseHeaders(origin: request.headers[.origin]))
            return response
        }
        router.on("/jsonrpc", method: .options) { request, _ in
            Response(
                status: .noContent,
                headers: crossOrigin.preflightHeaders(
                    origin: request.headers[.origin], requestedHeaders: request.headers[.accessControlRequestHeaders]))
        }
        router.allowOnly([.post, .options], at: "/jsonrpc")
    }

    func answer(_ request: Request) async throws -> Response {
        let buffer = try await JSONCoding.body(of: request, upTo: Self.maximumBodySize)
        let body: Aria2Body
        do {
            body = try Aria2Body.parse(buffer.readableBytesView)
        } catch {
            return Self.response(Aria2Response.error(error, id: .null), status: error.httpStatus)
        }
        let (answer, failure) = await methods.answer(body)
        return Self.response(answer, status: failure?.httpStatus ?? 200)
    }

    static func response(_ value: JSONValue, status: Int) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json-rpc"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: value.text)))
    }
}
