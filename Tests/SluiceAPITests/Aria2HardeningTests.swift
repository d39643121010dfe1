import Aria2RPC
import Foundation
import HTTPTypes
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 35, findings 1, 6 and 10, in-process: the numbers, the size of an answer and the
/// rules of a change through aria2's RPC, as a client with a `read` or `admin` token sends
/// them.
@Suite struct Aria2HardeningTests {
    static func call(_ service: RouterHarness, _ method: String, _ params: String = "[]") async throws -> [String: Any] {
        let reply = try await service.request(
            .post, "/jsonrpc", json: #"{"jsonrpc":"2.0","id":"t","method":"\#(method)","params":\#(params)}"#, contentType: nil)
        return try reply.json()
    }

    static func errorMessage(_ answer: [String: Any]) -> String? { (answer["error"] as? [String: Any])?["message"] as? String }

    /// `Int64.min` as an offset (number or string) and `Int64.max` as a position trapped the
    /// process: every download ended. Now each is an error and the service answers on.
    @Test func extremeNumbersAreErrorsAndTheServiceAnswersOn() async throws {
        try await RouterHarness.with { service in
            let job = try await service.request(.post, "/jobs", json: #"{"url":"http://127.0.0.1:1/x","paused":true}"#).json()
            let gid = Aria2GID.of(jobID: try #require(job["id"] as? String))
            for method in ["aria2.tellWaiting", "aria2.tellStopped"] {
                for offset in ["-9223372036854775808", #""-9223372036854775808""#, "9223372036854775807", "-1000000001"] {
                    let answer = try await Self.call(service, method, "[\(offset), 10]")
                    #expect(Self.errorMessage(answer)?.contains("offset must be between") == true, "\(method) \(offset): \(answer)")
                }
                let huge = try await Self.call(service, method, "[-1, 9223372036854775807]")
                #expect(huge["result"] is [Any], "\(huge)")
            }
            for how in ["POS_END", "POS_CUR", "POS_SET"] {
                for position in ["9223372036854775807", "-9223372036854775808"] {
                    let answer = try await Self.call(service, "aria2.changePosition", #"["\#(gid)", \#(position), "\#(how)"]"#)
                    #expect(Self.errorMessage(answer)?.contains("pos must be between") == true, "\(how) \(position): \(answer)")
                }
                let edge = try await Self.call(service, "aria2.changePosition", #"["\#(gid)", 1000000000, "\#(how)"]"#)
                #expect(edge["result"] as? Int == 0, "\(edge)")
            }
            let version = try await Self.call(service, "aria2.getVersion")
            #expect((version["result"] as? [String: Any])?["version"] as? String == "1.37.0")
        }
    }

    /// `changeOption` stored a `Host` header, a header with CR/LF and an `ftp://` proxy
    /// that `PATCH /jobs/ID` refuses; `changeGlobalOption` a rate past the queue's range.
    @Test func changeOptionAndChangeGlobalOptionKeepTheRulesOfPatch() async throws {
        try await RouterHarness.with { service in
            let job = try await service.request(.post, "/jobs", json: #"{"url":"http://127.0.0.1:1/x","paused":true}"#).json()
            let id = try #require(job["id"] as? String)
            let gid = Aria2GID.of(jobID: id)
            for options in [
                #"{"header":"Host: evil.example"}"#, #"{"header":["X-A: a\r\nX-Injected: b"]}"#, #"{"all-proxy":"ftp://127.0.0.1:21"}"#,
                #"{"header":"Bad Name: x"}"#,
            ] {
                let answer = try await Self.call(service, "aria2.changeOption", #"["\#(gid)", \#(options)]"#)
                #expect(answer["error"] != nil, "\(options) was taken: \(answer)")
            }
            let after = try await service.request(.get, "/jobs/\(id)").json()
            #expect(after["proxy"] is NSNull, "\(after)")
            let global = try await Self.call(service, "aria2.changeGlobalOption", #"[{"max-overall-download-limit":"8000000000000M"}]"#)
            #expect(global["error"] != nil, "\(global)")
            let queue = try await service.request(.get, "/queue").json()
            #expect((queue["settings"] as? [String: Any])?["limitRate"] is NSNull || queue["limitRate"] is NSNull, "\(queue)")
            // What the rules allow still goes through.
            let fine = try await Self.call(
                service, "aria2.changeOption", #"["\#(gid)", {"header":"X-Fine: yes","all-proxy":"http://127.0.0.1:3128"}]"#)
            #expect(fine["result"] as? String == "OK", "\(fine)")
        }
    }

    /// An 8.5 KB batch built a 223 MB answer. A request holds at most 1,000 calls, counted
    /// before any runs, multicall's included.
    @Test func aRequestOfMoreThanAThousandCallsIsRefusedWholeAndRunsNone() async throws {
        try await RouterHarness.with { service in
            let add = #"{"jsonrpc":"2.0","id":1,"method":"aria2.addUri","params":[["http://127.0.0.1:1/x"]]}"#
            let batch = "[" + Array(repeating: add, count: 1001).joined(separator: ",") + "]"
            let reply = try await service.request(.post, "/jsonrpc", json: batch, contentType: nil)
            #expect(reply.status == 400)
            #expect((try reply.json()["error"] as? [String: Any])?["code"] as? Int == -32600)
            let inner = #"{"methodName":"aria2.addUri","params":[["http://127.0.0.1:1/y"]]}"#
            let multicall =
                #"[{"jsonrpc":"2.0","id":2,"method":"system.multicall","params":[["#
                + Array(repeating: inner, count: 600).joined(separator: ",") + "]]},"
                + #"{"jsonrpc":"2.0","id":3,"method":"system.multicall","params":[["#
                + Array(repeating: inner, count: 600).joined(separator: ",") + "]]}]"
            #expect(try await service.request(.post, "/jsonrpc", json: multicall, contentType: nil).status == 400)
            let jobs = try await service.request(.get, "/jobs").json()["jobs"] as? [Any]
            #expect(jobs?.isEmpty == true, "calls of a refused request ran")
            // A thousand is fine.
            let ok =
                "[" + Array(repeating: #"{"jsonrpc":"2.0","id":1,"method":"system.listMethods"}"#, count: 1000).joined(separator: ",") + "]"
            let answered = try await service.request(.post, "/jsonrpc", json: ok, contentType: nil)
            #expect(answered.status == 200)
        }
    }
}

/// The answer's bytes, as a value: results are kept until the budget is spent, then each
/// is an error in its place.
@Suite struct Aria2AnswerBudgetTests {
    @Test func resultsPastTheBytesBecomeErrorsAndTheAnswerStaysBounded() throws {
        var budget = Aria2AnswerBudget(maximumBytes: 100)
        let result = JSONValue.string(String(repeating: "a", count: 40))
        #expect(try budget.admit(result) == result)
        #expect(try budget.admit(result) == result)
        #expect(throws: Aria2Failure.self) { try budget.admit(result) }
        #expect(try budget.admit(.integer(1)) == .integer(1))
        #expect(budget.bytes <= 100)
    }

    @Test func callsAreCountedInBatchesAndMulticalls() {
        let call = JSONValue.object([("method", .string("aria2.getVersion"))])
        let multicall = JSONValue.object([
            ("method", .string("system.multicall")), ("params", .array([.array(Array(repeating: call, count: 5))])),
        ])
        #expect(Aria2AnswerBudget.calls(in: call) == 1)
        #expect(Aria2AnswerBudget.calls(in: multicall) == 6)
        #expect(Aria2AnswerBudget.calls(in: .array([call, multicall, .integer(3)])) == 8)
    }
}
