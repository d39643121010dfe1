import JobService
import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceHTTP

/// `/jobs`: create, list, read, pause, resume, delete (CONTRACT §2).
struct JobsController {
    let jobs: any JobService

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.post("/jobs", use: create)
        router.get("/jobs", use: list)
        router.get("/jobs/:id", use: get)
        router.delete("/jobs/:id", use: delete)
        router.post("/jobs/:id/pause") { _, context in
            JSONCoding.response(try await jobs.pause(id: try Self.id(context)))
        }
        router.post("/jobs/:id/resume") { _, context in
            JSONCoding.response(try await jobs.resume(id: try Self.id(context)))
        }
        router.allowOnly([.get, .post], at: "/jobs")
        router.allowOnly([.get, .delete], at: "/jobs/:id")
        router.allowOnly([.post], at: "/jobs/:id/pause")
        router.allowOnly([.post], at: "/jobs/:id/resume")
    }

    @Sendable func create(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let body = try await JSONCoding.decode(CreateJobRequest.self, from: request)
        let job = try await jobs.create(body)
        return JSONCoding.response(job, status: .created, headers: [.location: "/jobs/\(job.id)"])
    }

    @Sendable func list(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        var states: Set<JobState>?
        if let text = query.get("state"), !text.isEmpty {
            states = try Set(
                text.split(separator: ",").map { name in
                    guard let state = JobState(rawValue: String(name)) else {
                        throw SluiceError(.invalidField, "state must be a comma-separated list of \(JobState.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    return state
                }
            )
        }
        var limit = 100
        if let text = query.get("limit") {
            guard let value = Int(text), (1...1000).contains(value) else {
                throw SluiceError(.invalidField, "limit must be between 1 and 1000")
            }
            limit = value
        }
        let jobs = try await jobs.list(states: states, limit: limit, after: query.get("after"))
        return JSONCoding.response(.object([("jobs", .array(jobs.map(\.json)))]))
    }

    @Sendable func get(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let id = try Self.id(context)
        guard let job = await jobs.job(id: id) else { throw SluiceError(.notFound, "no job \(id)") }
        return JSONCoding.response(job)
    }

    @Sendable func delete(_ request: Request, context: SluiceRequestContext) async throws -> Response {
        let flag = request.uri.queryParameters.get("deleteFile")
        guard flag == nil || flag == "true" || flag == "false" || flag == "1" || flag == "0" else {
            throw SluiceError(.invalidField, "deleteFile must be true or false")
        }
        try await jobs.delete(id: try Self.id(context), deleteFile: flag == "true" || flag == "1")
        return Response(status: .noContent)
    }

    static func id(_ context: SluiceRequestContext) throws -> String {
        guard let id = context.parameters.get("id") else { throw SluiceError(.notFound, "no such job") }
        return id
    }
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
