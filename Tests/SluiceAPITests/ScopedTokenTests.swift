import Aria2RPC
import Foundation
import JobStore
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing

/// Named tokens with a scope (issue 22): every route and every aria2 method answers by the
/// presented token's scope, the table taken from the router's routes and the service's
/// method list, so a route or method added later is checked too. In process: the router
/// answers by the token, whatever carries the request.
@Suite struct ScopedTokenTests {
    static let master = "master-token"

    /// A token of each scope, made through `POST /tokens` with the service's token.
    static func secrets(_ service: RouterHarness) async throws -> [TokenScope: String] {
        var secrets: [TokenScope: String] = [:]
        for scope in TokenScope.allCases {
            let reply = try await service.request(.post, "/tokens", json: #"{"name":"t-\#(scope.rawValue)","scope":"\#(scope.rawValue)"}"#)
            #expect(reply.status == 201)
            secrets[scope] = try #require(try reply.json()["token"] as? String)
        }
        return secrets
    }

    /// A concrete path for a route's pattern: parameters name nothing that exists.
    static func concrete(_ pattern: String) -> String {
        pattern.split(separator: "/", omittingEmptySubsequences: false).map { part in
            if part.hasPrefix("{") || part.hasPrefix(":") { return "no-such-thing" }
            if part == "*" || part == "**" { return "no-such-file" }
            return String(part)
        }.joined(separator: "/")
    }

    /// Routes open to anyone, and the event streams, which never end when allowed.
    static let open: Set<String> = ["/healthz", "/openapi.yaml", "/jsonrpc"]

    @Test func everyRouteAnswersByTheTokensScope() async throws {
        try await RouterHarness.with(token: Self.master) { service in
            let secrets = try await Self.secrets(service)
            #expect(service.routeTable.count > 20, "\(service.routeTable)")
            for entry in service.routeTable {
                let parts = entry.split(separator: " ", maxSplits: 1).map(String.init)
                let (method, pattern) = (parts[0], parts[1])
                let route = pattern.replacingOccurrences(of: #":([A-Za-z]+)"#, with: "{$1}", options: .regularExpression)
                // `allowOnly` lists M-SEARCH among the methods it refuses; a request with it
                // finds no route (404) and reaches no handler.
                guard !Self.open.contains(route), method != "M-SEARCH" else { continue }
                let needed = RouteScope.required(method: method, route: route)
                let path = Self.concrete(pattern)
                let body = ["POST", "PATCH", "PUT"].contains(method) ? "{}" : nil
                let anonymous = try await service.raw(method, path, body: body)
                #expect(anonymous.status == 401, "\(entry) without a token: \(anonymous.status)")
                for scope in TokenScope.allCases {
                    let allowed = scope.allows(needed)
                    // An allowed event stream would not end: its refusals are what is checked.
                    if allowed, route == "/events" { continue }
                    let reply = try await service.raw(method, path, headers: ["Authorization": "Bearer \(secrets[scope]!)"], body: body)
                    if allowed {
                        #expect(![401, 403].contains(reply.status), "\(entry) with a \(scope) token: \(reply.status)")
                    } else {
                        #expect(reply.status == 403, "\(entry) with a \(scope) token: \(reply.status)")
                        #expect(reply.header("WWW-Authenticate") == #"Bearer error="insufficient_scope""#)
                    }
                }
            }
            // The event streams take a read token as `?access_token=` too.
            let stream = try await service.raw("GET", "/jobs/no-such-thing/events?access_token=\(secrets[.read]!)")
            #expect(stream.status == 404)
        }
    }

    @Test func everyAria2MethodAnswersByTheTokensScope() async throws {
        try await RouterHarness.with(token: Self.master) { service in
            let secrets = try await Self.secrets(service)
            let list = try await service.raw("POST", "/jsonrpc", body: #"{"jsonrpc":"2.0","id":1,"method":"system.listMethods"}"#)
            let methods = try #require(try JSONSerialization.jsonObject(with: list.bodyData) as? [String: Any])["result"] as? [String]
            #expect((methods?.count ?? 0) > 30)
            for method in methods ?? [] where !method.hasPrefix("system.") {
                let needed = Aria2Scope.required(method: method)
                for scope in TokenScope.allCases {
                    let call = #"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":["token:\#(secrets[scope]!)","0000000000000000"]}"#
                    let reply = try await service.raw("POST", "/jsonrpc", body: call)
                    let answer = try #require(try JSONSerialization.jsonObject(with: reply.bodyData) as? [String: Any])
                    let message = (answer["error"] as? [String: Any])?["message"] as? String ?? ""
                    if scope.allows(needed) {
                        #expect(message != "Unauthorized" && !message.hasPrefix("Forbidden"), "\(method) with a \(scope) token: \(message)")
                    } else {
                        #expect(message.hasPrefix("Forbidden"), "\(method) with a \(scope) token: \(answer)")
                    }
                }
                let wrong = try await service.raw(
                    "POST", "/jsonrpc", body: #"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":["token:guess"]}"#)
                #expect(String(decoding: wrong.bodyData, as: UTF8.self).contains(#""Unauthorized""#), "\(method)")
            }
        }
    }

    @Test func tokensAreMadeListedAndRevokedByAnAdmin() async throws {
        try await RouterHarness.with(token: Self.master) { service in
            let made = try await service.request(.post, "/tokens", json: #"{"name":"firefox","scope":"add"}"#)
            #expect(made.status == 201)
            let secret = try #require(try made.json()["token"] as? String)
            #expect(secret.hasPrefix("sluice_") && secret.count > 40)
            // The secret is shown once: never listed, never stored.
            let listed = try await service.request(.get, "/tokens")
            #expect(!String(decoding: listed.bodyData, as: UTF8.self).contains(secret))
            #expect((try listed.json()["tokens"] as? [[String: Any]])?.map { $0["name"] as? String } == ["firefox"])
            #expect(try await service.request(.post, "/tokens", json: #"{"name":"firefox","scope":"read"}"#).status == 409)
            for bad in [
                #"{"name":"a b","scope":"add"}"#, #"{"name":"x","scope":"root"}"#, #"{"name":"x"}"#,
                #"{"name":"x","scope":"add","extra":1}"#,
            ] {
                let refused = try await service.request(.post, "/tokens", json: bad)
                #expect(refused.status == 400, "\(bad)")
            }
            // An add token adds, and may not manage tokens.
            let addHeader = ["Authorization": "Bearer \(secret)"]
            let job = try await service.raw("POST", "/jobs", headers: addHeader, body: #"{"url":"http://127.0.0.1:9/x","paused":true}"#)
            #expect(job.status == 201)
            #expect(try await service.raw("GET", "/tokens", headers: addHeader).status == 403)
            // Revoked on this node: refused at once.
            #expect(try await service.request(.delete, "/tokens/firefox").status == 204)
            #expect(try await service.raw("GET", "/jobs", headers: addHeader).status == 401)
            #expect(try await service.request(.delete, "/tokens/firefox").status == 404)
        }
    }

    @Test func aTokenMadeInTheStoreByAnotherProcessIsAccepted() async throws {
        // `sluice token create --data DIR` writes the service's SQLite store beside it.
        guard !ServiceHarness.onPostgres else { return }
        try await RouterHarness.with(token: Self.master) { service in
            let store = try SQLiteJobRepository(path: service.data + "/sluice.sqlite")
            let (_, secret) = try await TokenRegistry(master: nil, store: store).create(name: "cli", scope: .read)
            let header = ["Authorization": "Bearer \(secret)"]
            #expect(try await service.raw("GET", "/jobs", headers: header).status == 200)
            #expect(try await service.raw("DELETE", "/jobs/no-such-thing", headers: header).status == 403)
        }
    }
}
