import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// A webhook receiver for tests: `POST /hook` records every call (headers and body) and
/// answers 500 to the first `failures` of them, 200 after; `failures` can be changed while
/// it runs.
public final class WebhookReceiver: Sendable {
    public struct Call: Sendable {
        /// By lower-cased name.
        public var headers: [String: String]
        public var body: String

        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    private let state: Mutex<(calls: [Call], failures: Int)>

    public init(failures: Int = 0) {
        state = Mutex(([], failures))
    }

    public var calls: [Call] { state.withLock { $0.calls } }

    public func setFailures(_ failures: Int) { state.withLock { $0.failures = failures } }

    /// Runs the receiver on a free port for the duration of `body`, which gets its URL.
    public func run<T: Sendable>(_ body: @Sendable (_ url: String) async throws -> T) async throws -> T {
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
            let fail = self.state.withLock { state -> Bool in
                state.calls.append(Call(headers: headers, body: String(buffer: buffer)))
                guard state.failures > 0 else { return false }
                state.failures -= 1
                return true
            }
            return Response(status: fail ? .internalServerError : .ok)
        }
        return try await withRunningServer(router: router) { port in
            try await body("http://127.0.0.1:\(port)/hook")
        }
    }
}
