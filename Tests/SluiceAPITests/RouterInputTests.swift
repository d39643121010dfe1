import Foundation
import HTTPTypes
import SluiceCore
import Testing

/// The API's answers to bad input, unknown jobs and routes, and wrong methods, on the
/// routes driven in-process: no socket, the real job service and store.
@Suite struct RouterInputTests {
    @Test(arguments: [
        (#"{"url": "ftp://example.com/x"}"#, 400, "unsupported_scheme"),
        (#"{"url": "file:///etc/passwd"}"#, 400, "unsupported_scheme"),
        (#"{"url": "/relative/path"}"#, 400, "invalid_url"),
        (#"{"url": "http://"}"#, 400, "invalid_url"),
        (#"{"url": "http://exa mple.com/"}"#, 400, "invalid_url"),
        (#"{}"#, 400, "invalid_url"),
        (#"{"url": 5}"#, 400, "invalid_url"),
        (#"{"url": "http://x/a", "filename": "../etc/passwd"}"#, 400, "invalid_filename"),
        (#"{"url": "http://x/a", "filename": "a/b"}"#, 400, "invalid_filename"),
        (#"{"url": "http://x/a", "filename": ".."}"#, 400, "invalid_filename"),
        (#"{"url": "http://x/a", "filename": "a\u0000b"}"#, 400, "invalid_filename"),
        (#"{"url": "http://x/a", "connections": 0}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "connections": 17}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "connections": "4"}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "sha256": "abc"}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "priority": 1.5}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "paused": "yes"}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "headers": {"Range": "bytes=0-1"}}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "headers": {"X-A": "line\nbreak"}}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "headers": ["a"]}"#, 400, "invalid_field"),
        // Issue 36: a field no job has is refused, never dropped (a misspelt filename).
        (#"{"url": "http://x/a", "filname": "named.iso"}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "directory": "a"}"#, 400, "invalid_field"),
        // `dir` (CONTRACT §2): plain names under the documents.
        (#"{"url": "http://x/a", "dir": "../out"}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "dir": "/etc"}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "dir": "a//b"}"#, 400, "invalid_field"),
        (#"{"url": "http://x/a", "dir": "a/./b"}"#, 400, "invalid_field"),
        (#"{"url": "127.0.0.1:8080/x"}"#, 400, "invalid_url"),
        (#"{"url": "#, 400, "invalid_json"),
        (#"[1, 2]"#, 400, "invalid_json"),
        (#""just a string""#, 400, "invalid_json"),
        ("", 400, "invalid_json"),
    ])
    func badInputIsRefusedAndChangesNothing(body: String, status: Int, code: String) async throws {
        try await RouterHarness.with { service in
            let reply = try await service.request(.post, "/jobs", json: body)
            #expect(reply.status == status)
            #expect(reply.errorCode == code)
            let message = ((try reply.json())["error"] as? [String: Any])?["message"] as? String
            #expect(message?.isEmpty == false)
            let jobs = try await service.request(.get, "/jobs").json()["jobs"] as? [Any]
            #expect(jobs?.isEmpty == true)
        }
    }

    @Test func anUnknownFieldIsNamedAndAURLWithoutSchemeGetsAHint() async throws {
        try await RouterHarness.with { service in
            let misspelt = try await service.request(.post, "/jobs", json: #"{"url":"http://x/a","filname":"named.iso"}"#)
            let error = try #require(try misspelt.json()["error"] as? [String: Any])
            #expect(error["field"] as? String == "filname")
            #expect((error["message"] as? String)?.contains("filname is not a field of a job") == true, "\(error)")
            let bare = try await service.request(.post, "/jobs", json: #"{"url":"127.0.0.1:8080/x"}"#)
            let hint = ((try bare.json()["error"] as? [String: Any])?["message"] as? String) ?? ""
            #expect(hint.contains("did you mean http://127.0.0.1:8080/x?"), "\(hint)")
        }
    }

    @Test func oversizedAndNonJSONBodies() async throws {
        try await RouterHarness.with { service in
            let big = #"{"url": "http://x/a", "filename": ""# + String(repeating: "a", count: 70_000) + #""}"#
            let tooLarge = try await service.request(.post, "/jobs", json: big)
            #expect(tooLarge.status == 413)
            #expect(tooLarge.errorCode == "payload_too_large")
            let text = try await service.request(.post, "/jobs", json: #"{"url":"http://x/a"}"#, contentType: "text/plain")
            #expect(text.status == 415)
            let none = try await service.request(.post, "/jobs", json: #"{"url":"http://x/a"}"#, contentType: nil)
            #expect(none.status == 415)
            let charset = try await service.request(
                .post, "/jobs", json: #"{"url":"http://x/a","paused":true}"#, contentType: "application/json; charset=utf-8"
            )
            #expect(charset.status == 201)
        }
    }

    @Test func unknownJobsAndRoutes() async throws {
        try await RouterHarness.with { service in
            for (method, path) in [
                (HTTPRequest.Method.get, "/jobs/nope"), (.post, "/jobs/nope/pause"), (.post, "/jobs/nope/resume"), (.delete, "/jobs/nope"),
                (.get, "/jobs/nope/events"), (.get, "/nothing/here"),
            ] {
                let reply = try await service.request(method, path)
                #expect(reply.status == 404, "\(method) \(path)")
                #expect(reply.errorCode == "not_found")
            }
        }
    }

    @Test func wrongMethodsGet405WithAllow() async throws {
        try await RouterHarness.with { service in
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.put, "/jobs", "GET, POST, DELETE, HEAD"), (.patch, "/jobs", "GET, POST, DELETE, HEAD"),
                (.post, "/jobs/x", "GET, PATCH, DELETE, HEAD"), (.get, "/jobs/x/pause", "POST"), (.delete, "/jobs/x/resume", "POST"),
                (.post, "/events", "GET, HEAD"), (.get, "/jobs/pause", "POST"), (.delete, "/jobs/resume", "POST"),
                (.post, "/queue", "GET, PATCH, HEAD"), (.delete, "/jobs/x/segments", "GET, HEAD"),
            ]
            let more: [(HTTPRequest.Method, String, String)] = [
                (.post, "/healthz", "GET, HEAD"), (.delete, "/files/a.iso", "GET, HEAD"), (.put, "/testdata/1K", "GET, HEAD"),
                (.post, "/metrics", "GET, HEAD"),
            ]
            for (method, path, allow) in cases + more {
                let reply = try await service.request(method, path)
                #expect(reply.status == 405, "\(method) \(path)")
                #expect(reply.headers[.allow] == allow)
                #expect(reply.errorCode == "method_not_allowed")
            }
        }
    }
}
