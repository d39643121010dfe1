import Foundation
import Hummingbird
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 35, findings 7 and 8: the client printed whatever the service sent, so a wrong or
/// compromised `SLUICE_URL` (or a remote's text inside a job: a certificate's names in its
/// error) drove the user's terminal: a retitle, a cleared screen, colours, a forged line.
/// Every command shows such text escaped, as `ls -b` does; `--json` stays JSON.
@Suite struct HostileServiceTests {
    /// A title change, a cleared screen, a C1 CSI, a forged second line, a right-to-left
    /// override: what a terminal would act on.
    static let hostile = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31mred\nFORGED\u{202E}txt"

    static func job(state: String) -> String {
        let text = JSONValue.string(hostile).text
        return #"{"id":"0000000000abc","url":"http://h/x","state":"\#(state)","filename":\#(text),"bytesDone":0,"#
            + #""speed":0,"connections":1,"resumable":true,"priority":0,"createdAt":"2026-01-01T00:00:00Z","#
            + #""updatedAt":"2026-01-01T00:00:00Z","error":{"code":"tls","message":\#(text)}}"#
    }

    /// A "service" that answers every client route with the hostile job.
    static func withHostileService(_ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.get("/jobs") { _, _ in Self.response(#"{"jobs":[\#(job(state: "running"))]}"#) }
        router.get("/jobs/:id") { _, _ in Self.response(job(state: "failed")) }
        router.get("/queue") { _, _ in Self.response(#"{"paused":false,"maxActive":3,\#(JSONValue.string(hostile).text):1}"#) }
        router.get("/events") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/event-stream"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "event: job\ndata: \(job(state: "running"))\n\n")))
        }
        try await withRunningServer(router: router) { port in try await body("http://127.0.0.1:\(port)") }
    }

    static func response(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func sluice(_ arguments: [String], _ url: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess(arguments: arguments + ["--server", url], environment: [:]).finish(timeout: .seconds(60))
    }

    @Test func noCommandPassesAServicesControlCharactersToTheTerminal() async throws {
        try await Self.withHostileService { url in
            for arguments in [["ls"], ["show", "0000000000abc"], ["wait", "0000000000abc"], ["queue"], ["watch"]] {
                let run = try await Self.sluice(arguments, url)
                for (name, output) in [("stdout", run.stdout), ("stderr", run.stderr)] {
                    #expect(
                        !output.unicodeScalars.contains { TerminalText.isUnsafe($0) && $0 != "\n" && $0 != "\t" },
                        "\(arguments) \(name): \(output.debugDescription)")
                    #expect(!output.contains("\nFORGED"), "\(arguments) \(name): \(output.debugDescription)")
                }
                #expect((run.stdout + run.stderr).contains(#"\e]0;owned\x07"#), "\(arguments): \(run.stdout.debugDescription)")
            }
        }
    }

    @Test func jsonOutputIsTheSameJSONWithNothingATerminalActsOn() async throws {
        try await Self.withHostileService { url in
            for arguments in [["ls", "--json"], ["show", "0000000000abc", "--json"]] {
                let run = try await Self.sluice(arguments, url)
                #expect(!run.stdout.unicodeScalars.contains { TerminalText.isUnsafe($0) && $0 != "\n" }, "\(run.stdout.debugDescription)")
                let value = try JSONDecoder().decode(JSONValue.self, from: Data(run.stdout.utf8))
                let job = value["jobs"].flatMap { if case .array(let jobs) = $0 { jobs.first } else { nil } } ?? value
                #expect(job["filename"]?.stringValue == Self.hostile)
            }
        }
    }
}
