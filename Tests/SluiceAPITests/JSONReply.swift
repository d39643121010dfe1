import Foundation
import HTTPTypes
import SluiceTestSupport
import Testing

/// An API answer, through a socket (`ServiceHarness`) or in-process (`RouterHarness`),
/// read as the API's JSON (docs/api.md).
protocol JSONReply: Sendable {
    var status: Int { get }
    var bodyData: Data { get }
    /// A header's value, by its name in any case.
    func header(_ name: String) -> String?
}

extension JSONReply {
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: bodyData) as? [String: Any] else {
            throw RawHTTPClient.Failure(description: "not a JSON object: \(String(decoding: bodyData, as: UTF8.self))")
        }
        return object
    }

    /// `error.code` of an error body (docs/api.md, "Errors").
    var errorCode: String? { ((try? json())?["error"] as? [String: Any])?["code"] as? String }

    /// `error.field` of an error body.
    var errorField: String? { ((try? json())?["error"] as? [String: Any])?["field"] as? String }
}

/// The API as the tests drive it: through a socket (`ServiceHarness`) or in process
/// (`RouterHarness`), with the same helpers on both.
protocol APIHarness: Sendable {
    associatedtype Reply: JSONReply
    /// The service's data directory.
    var data: String { get }
    /// A URL of the Range origin's `/testdata/` (or `/files/`) that the service's engine fetches.
    func testdata(_ path: String) -> String
    /// `method path` with `json` as its body (as `contentType`), and the harness's token when
    /// `authorized`.
    func call(_ method: HTTPRequest.Method, _ path: String, json: String?, contentType: String?, authorized: Bool) async throws -> Reply
}

extension APIHarness {
    /// `method path` with `json` as its body, and the harness's token.
    func call(_ method: HTTPRequest.Method, _ path: String, json: String?) async throws -> Reply {
        try await call(method, path, json: json, contentType: "application/json", authorized: true)
    }

    /// Sends `fields` as JSON with `method` and returns the reply.
    func send(_ method: HTTPRequest.Method, _ path: String, _ fields: Any) async throws -> Reply {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        return try await call(method, path, json: body)
    }

    /// Creates a job and returns its JSON.
    func create(_ fields: [String: Any]) async throws -> [String: Any] {
        let reply = try await send(.post, "/jobs", fields)
        guard reply.status == 201 else {
            throw RawHTTPClient.Failure(description: "create answered \(reply.status): \(String(decoding: reply.bodyData, as: UTF8.self))")
        }
        return try reply.json()
    }

    func job(_ id: String) async throws -> [String: Any] {
        try await call(.get, "/jobs/\(id)", json: nil).json()
    }

    /// Polls the job until `condition` holds, failing after the deadline.
    @discardableResult
    func waitFor(
        _ id: String, timeout: Duration = .seconds(30), _ condition: @Sendable ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let job = try await job(id)
            if condition(job) { return job }
            guard ContinuousClock.now < deadline else {
                throw RawHTTPClient.Failure(description: "job \(id) never reached the condition: \(job)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Polls `condition` until it holds, failing after the deadline.
    func eventually(
        _ what: String, timeout: Duration = .seconds(30), _ condition: @Sendable () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw RawHTTPClient.Failure(description: "never: \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Every job's state, by id.
    func states() async throws -> [String: String] {
        let jobs = try await call(.get, "/jobs?limit=1000", json: nil).json()["jobs"] as! [[String: Any]]
        return Dictionary(uniqueKeysWithValues: jobs.map { ($0["id"] as! String, $0["state"] as! String) })
    }

    /// How many jobs run now, by `GET /queue`.
    func runningCount() async throws -> Int {
        let queue = try await call(.get, "/queue", json: nil).json()
        return (queue["counts"] as! [String: Any])["running"] as! Int
    }

    /// Issue 36, on every error path the API tests reach: no failed job's message, as the
    /// API, the dashboard and `sluice ls` show it, is in a library's words.
    func expectPlainErrors() async {
        guard let reply = try? await call(.get, "/jobs?state=failed&limit=1000", json: nil), reply.status == 200,
            let jobs = (try? reply.json())?["jobs"] as? [[String: Any]]
        else { return }
        for job in jobs {
            guard let message = (job["error"] as? [String: Any])?["message"] as? String else { continue }
            if let word = LibraryWording.found(in: message) {
                Issue.record("job \(job["id"] ?? "?")'s error is in a library's words (\(word)): \(message)")
            }
        }
    }
}
