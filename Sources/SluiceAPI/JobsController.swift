import JobService
import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceHTTP

/// `/jobs`: create, list, read, edit, pause, resume, delete, one job or many (docs/api.md,
/// "Routes"), and a job's segments and webhook deliveries.
struct JobsController {
    let jobs: any JobService

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.post("/jobs", use: create)
        router.post("/jobs/batch") { request, _ in
            guard request.headers[.idempotencyKey] == nil else {
                throw SluiceError(
                    .invalidField, "Idempotency-Key is not taken by POST /jobs/batch: send a job with POST /jobs to use one",
                    field: "Idempotency-Key"
                )
            }
            let batch = try await JSONCoding.decode(CreateJobBatch.self, from: request)
            return JSONCoding.response(list: try await jobs.createAll(batch.jobs), status: .created)
        }
        router.get("/jobs", use: list)
        router.delete("/jobs", use: deleteMany)
        router.post("/jobs/pause") { request, _ in
            JSONCoding.response(list: try await jobs.pauseAll(try await Self.selection(request)))
        }
        router.post("/jobs/resume") { request, _ in
            JSONCoding.response(list: try await jobs.resumeAll(try await Self.selection(request)))
        }
        router.get("/jobs/:id", use: get)
        router.patch("/jobs/:id", use: edit)
        router.delete("/jobs/:id", use: delete)
        router.get("/jobs/:id/segments") { _, context in
            JSONCoding.response(.array(try await jobs.segments(id: try Self.id(context)).map(\.json)))
        }
        router.get("/jobs/:id/deliveries") { _, context in
            JSONCoding.response(.array(try await jobs.deliveries(id: try Self.id(context)).map(\.json)))
        }
        router.post("/jobs/:id/pause") { _, context in
            JSONCoding.response(try await jobs.pause(id: try Self.id(context)))
        }
        router.post("/jobs/:id/resume") { _, context in
            JSONCoding.response(try await jobs.resume(id: try Self.id(context)))
        }
        router.allowOnly([.get, .post, .delete], at: "/jobs")
        router.allowOnly([.post], at: "/jobs/batch")
        router.allowOnly([.post], at: "/jobs/pause")
        router.allowOnly([.post], at: "/jobs/resume")
        router.allowOnly([.get, .patch, .delete], at: "/jobs/:id")
        router.allowOnly([.get], at: "/jobs/:id/segments")
        router.allowOnly([.get], at: "/jobs/:id/deliveries")
        router.allowOnly([.post], at: "/jobs/:id/pause")
        router.allowOnly([.post], at: "/jobs/:id/resume")
    }

    @Sendable func create(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let body = try await JSONCoding.decode(CreateJobRequest.self, from: request)
        let key = request.headers[.idempotencyKey]
        let (job, replayed) = try await jobs.create(body, idempotencyKey: key)
        if replayed {
            return JSONCoding.response(job, status: .ok, headers: [.location: "/jobs/\(job.id)", .idempotentReplayed: "true"])
        }
        return JSONCoding.response(job, status: .created, headers: [.location: "/jobs/\(job.id)"])
    }

    @Sendable func edit(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let id = try Self.id(context)
        let patch = try await JSONCoding.decode(JobPatch.self, from: request)
        return JSONCoding.response(try await jobs.edit(id: id, patch))
    }

    /// `DELETE /jobs?state=...`: every job in those states. Without a filter it is refused,
    /// so that no request wipes every job by accident.
    @Sendable func deleteMany(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        guard let text = request.uri.queryParameters.get("state"), !text.isEmpty else {
            throw SluiceError(.invalidField, "state is required: DELETE /jobs removes only the jobs in the states it names", field: "state")
        }
        let deleted = try await jobs.deleteAll(states: try JobSelection.states(parsing: text), deleteFile: try Self.deleteFile(request))
        return JSONCoding.response(.object([("deleted", JSONValue(deleted))]))
    }

    /// A bulk action's jobs: `?state=`, a body `{"ids": [...]}`, both (the named jobs in
    /// those states), or with neither every job.
    static func selection(_ request: Request) async throws -> JobSelection {
        let hasBody = request.headers[.contentLength].flatMap(Int.init).map { $0 > 0 } ?? (request.headers[.transferEncoding] != nil)
        var states: Set<JobState>?
        if let text = request.uri.queryParameters.get("state") {
            guard !text.isEmpty else { throw SluiceError(.invalidField, "state names no state", field: "state") }
            states = try JobSelection.states(parsing: text)
        }
        guard hasBody else { return states.map { .states($0) } ?? .all }
        return .ids(try await JSONCoding.decode(JobIDList.self, from: request).ids, states: states)
    }

    static func deleteFile(_ request: Request) throws -> Bool {
        let flag = request.uri.queryParameters.get("deleteFile")
        guard flag == nil || flag == "true" || flag == "false" || flag == "1" || flag == "0" else {
            throw SluiceError(.invalidField, "deleteFile must be true or false", field: "deleteFile")
        }
        return flag == "true" || flag == "1"
    }

    /// The largest `offset` of `GET /jobs`: far past any list, small enough for any store.
    static let offsetLimit = 100_000_000

    @Sendable func list(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        var states: Set<JobState>?
        if let text = query.get("state"), !text.isEmpty {
            states = try JobSelection.states(parsing: text)
        }
        var limit = 100
        if let text = query.get("limit") {
            guard let value = Int(text), (1...1000).contains(value) else {
                throw SluiceError(.invalidField, "limit must be between 1 and 1000", field: "limit")
            }
            limit = value
        }
        var offset = 0
        if let text = query.get("offset") {
            guard let value = Int(text), (0...Self.offsetLimit).contains(value) else {
                throw SluiceError(.invalidField, "offset must be between 0 and \(Self.offsetLimit)", field: "offset")
            }
            offset = value
        }
        if let text = query.get("heldBy") {
            guard let hold = JobHold(rawValue: text) else {
                throw SluiceError(
                    .invalidField, "heldBy must be one of \(JobHold.allCases.map(\.rawValue).joined(separator: ", "))", field: "heldBy")
            }
            // Only queued jobs are held: with states that leave `queued` out, none.
            guard states?.contains(.queued) ?? true else { return JSONCoding.response(.object([("jobs", .array([]))])) }
            let held = try await jobs.list(heldBy: hold, limit: limit, after: query.get("after"), offset: offset)
            return JSONCoding.response(.object([("jobs", .array(held.map(\.json)))]))
        }
        let jobs = try await jobs.list(states: states, limit: limit, after: query.get("after"), offset: offset)
        return JSONCoding.response(.object([("jobs", .array(jobs.map(\.json)))]))
    }

    @Sendable func get(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let id = try Self.id(context)
        guard let job = try await jobs.job(id: id) else { throw SluiceError(.notFound, "no job \(id)") }
        return JSONCoding.response(job)
    }

    @Sendable func delete(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        try await jobs.delete(id: try Self.id(context), deleteFile: try Self.deleteFile(request))
        return Response(status: .noContent)
    }

    static func id(_ context: SluiceRequestContext) throws -> String {
        guard let id = context.parameters.get("id") else { throw SluiceError(.notFound, "no such job") }
        return id
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
    static let idempotentReplayed = Self("Idempotent-Replayed")!
}

extension Router {
    /// Every method NIO's HTTP/1 parser lets through (others are refused by the parser with
    /// 400): each gets its 405 on a known path, not a 404.
    static var parsedMethods: [HTTPRequest.Method] {
        [.get, .post, .put, .patch, .delete, .options, .trace, .connect]
            + [
                "COPY", "LOCK", "MKCOL", "MOVE", "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "BIND", "REBIND", "UNBIND",
                "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "M-SEARCH", "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE",
                "PURGE", "MKCALENDAR", "LINK", "UNLINK", "SOURCE", "QUERY",
            ].compactMap { HTTPRequest.Method($0) }
    }

    /// Answers 405 with `Allow` for the methods a known path does not support.
    func allowOnly(_ methods: [HTTPRequest.Method], at path: RouterPath) {
        var allowed = methods
        if methods.contains(.get) { allowed.append(.head) }
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        for method in Self.parsedMethods where !methods.contains(method) {
            on(path, method: method) { _, _ -> Response in
                SluiceError(.methodNotAllowed, "\(path) allows \(allow)").response(headers: [.allow: allow])
            }
        }
    }
}
