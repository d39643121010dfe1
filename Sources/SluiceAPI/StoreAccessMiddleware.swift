import HTTPTypes
import Hummingbird
import JobService
import SluiceCore

/// What a request may ask of the job store. Every store call a request makes is bounded by
/// `budget` (the service's `storeBudget`; a stalled store answers 503 `store_unavailable` within it, not
/// after the store's own timeout); while the store is known not to answer (`StoreHealth`), a
/// command that must write it is refused at once, and reads are answered from memory.
struct StoreAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let health: StoreHealth?
    let budget: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Only a routed command: a wrong path or method keeps its 404 or 405.
        if let health, !health.isAvailable, context.endpointPath != nil, Self.writesStore(request) {
            throw SluiceError(.storeUnavailable, "the job store is not answering; nothing was changed (try again once /healthz says ok)")
        }
        return try await StoreCallBudget.$current.withValue(StoreCallBudget(budget)) {
            try await next(request, context)
        }
    }

    /// A command on jobs or the queue (what reads only is answered from memory).
    static func writesStore(_ request: Request) -> Bool {
        guard request.method != .get, request.method != .head, request.method != .options else { return false }
        let path = request.uri.path
        return path == "/jobs" || path.hasPrefix("/jobs/") || path == "/queue" || path.hasPrefix("/queue/") || path == "/schedule"
    }
}
