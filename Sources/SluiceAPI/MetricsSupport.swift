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
    let factory: any MetricsFactory


    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var status = 500
        defer {
            Self.record(
                factory: factory, method: request.method, route: context.endpointPath ?? "unmatched", status: status,
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

/// `GET /metrics` in the Prometheus text format.
extension RequestMetricsMiddleware {
    static func record(
        factory: any MetricsFactory, method: HTTPRequest.Method, route: String, status: Int, duration: Duration
    ) {
        // Known methods only: a client inventing methods must not invent metric series.
        let method = knownMethods.contains(method) ? method.rawValue : "other"
        let dimensions = [("method", method), ("route", route), ("status", String(status))]
        Timer(label: "sluice_http_request_duration_seconds", dimensions: dimensions, factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    /// Records answers given outside the router (the origin's fast path) the same way,
    /// with one timer per status made once rather than looked up per answer.
    static func recorder(
        factory: any MetricsFactory, method: HTTPRequest.Method, route: String
    ) -> @Sendable (HTTPResponse.Status, Duration) -> Void {
        let timers = Mutex<[Int: CoreMetrics.Timer]>([:])
        return { status, duration in
            let timer = timers.withLock { timers in
                if let timer = timers[status.code] { return timer }
                let dimensions = [("method", method.rawValue), ("route", route), ("status", String(status.code))]
                let timer = Timer(label: "sluice_http_request_duration_seconds", dimensions: dimensions, factory: factory)
                timers[status.code] = timer
                return timer
            }
            timer.recordNanoseconds(duration.nanoseconds)
        }
    }
}

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
