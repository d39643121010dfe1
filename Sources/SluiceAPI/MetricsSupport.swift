import CoreMetrics
import JobService
import Foundation
import HTTPTypes
import Hummingbird
import Prometheus
import SluiceCore
import SluiceHTTP
import Synchronization

/// Request durations by method, route and status, into the service's own registry.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let timers: RequestTimers

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var status = 500
        defer {
            timers.record(
                method: request.method, route: context.endpointPath ?? "unmatched", status: status,
                duration: ContinuousClock.now - start
            )
        }
        do {
            let response = try await next(request, context)
            status = Int(response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            status = Int(error.status.code)
            throw error
        }
    }
}

/// `sluice_http_request_duration_seconds`, one timer per method, route and status, each
/// made once instead of looked up in the registry on every request. Used by the router's
/// middleware and by answers given outside the router (the origin's fast path).
final class RequestTimers: Sendable {
    private struct Key: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    private let factory: any MetricsFactory
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func record(method: HTTPRequest.Method, route: String, status: Int, duration: Duration) {
        // Known methods only: a client inventing methods must not invent metric series.
        let key = Key(method: knownMethods.contains(method) ? method.rawValue : "other", route: route, status: status)
        let timer = timers.withLock { timers in
            if let timer = timers[key] { return timer }
            let dimensions = [("method", key.method), ("route", key.route), ("status", String(key.status))]
            let timer = CoreMetrics.Timer(label: "sluice_http_request_duration_seconds", dimensions: dimensions, factory: factory)
            timers[key] = timer
            return timer
        }
        timer.recordNanoseconds(duration.nanoseconds)
    }

    /// `record` for one method and route, as the origin's fast path reports its answers.
    func recorder(method: HTTPRequest.Method, route: String) -> @Sendable (HTTPResponse.Status, Duration) -> Void {
        { status, duration in self.record(method: method, route: route, status: status.code, duration: duration) }
    }
}

/// `GET /metrics` in the Prometheus text format.
struct MetricsController {
    let registry: PrometheusCollectorRegistry
    let factory: any MetricsFactory
    let jobs: any JobService

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.get("/metrics") { _, _ in
            for (state, count) in await jobs.countsByState() {
                Gauge(label: "sluice_jobs", dimensions: [("state", state.rawValue)], factory: factory).record(count)
            }
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
            )
        }
        router.allowOnly([.get], at: "/metrics")
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// The methods metrics name; built once, not per request.
private let knownMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options, .trace, .connect]
