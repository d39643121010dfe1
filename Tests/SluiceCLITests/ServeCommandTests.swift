#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

@Suite struct ServeCommandTests {
    @Test func refusesANonLoopbackAddressWithoutAToken() async throws {
        try await withTemporaryDirectory { directory in
            let run = try ChildProcess(arguments: ["serve", "--host", "0.0.0.0", "--port", "0", "--data", directory.path])
            let (status, _, stderr) = try await run.finish(timeout: .seconds(10))
            #expect(status != 0)
            #expect(stderr.contains("token"))
            #expect(stderr.contains("--insecure-no-auth"))
        }
    }

    @Test func runsFromEnvironmentAloneAnswersHealthchecksAndStopsOnSIGTERM() async throws {
        try await withTemporaryDirectory { directory in
            let run = try ChildProcess(
                arguments: ["serve"],
                environment: [
                    "SLUICE_HOST": "127.0.0.1", "SLUICE_PORT": "0", "SLUICE_DATA": directory.path + "/data",
                    "SLUICE_TOKEN": "t0ken", "SLUICE_MAX_ACTIVE": "2",
                ]
            )
            let line = try await run.waitForLine(containing: "listening on http://127.0.0.1:")
            let url = String(line[line.range(of: "http://")!.lowerBound...])
            let port = Int(url.split(separator: ":").last!)!
            let health = try ChildProcess(arguments: ["healthcheck", "--url", url])
            #expect(try await health.finish().status == 0)
            // The token from the environment is in force.
            #expect(try await RawHTTPClient.request(port: port, path: "/jobs").status == 401)
            #expect(try await RawHTTPClient.request(port: port, path: "/jobs", headers: ["Authorization": "Bearer t0ken"]).status == 200)
            #expect(FileManager.default.fileExists(atPath: directory.path + "/data/sluice.sqlite"))
            let start = ContinuousClock.now
            run.signal(SIGTERM)
            let (status, _, _) = try await run.finish(timeout: .seconds(10))
            #expect(status == 0)
            #expect(ContinuousClock.now - start < .seconds(5))
            let after = try ChildProcess(arguments: ["healthcheck", "--url", url])
            #expect(try await after.finish().status == 1)
        }
    }

    /// One file to install: a binary copied to an empty directory serves the dashboard and
    /// the spec it was built with, and says so; `--public` still serves a directory.
    @Test func aCopiedBinaryServesTheDashboardBuiltIntoIt() async throws {
        try await withTemporaryDirectory { directory in
            let binary = directory.path + "/bin/sluice"
            try FileManager.default.createDirectory(atPath: directory.path + "/bin", withIntermediateDirectories: true)
            // Copied by cp, not in this process: a child another test spawns while this process
            // holds the copy open for writing inherits that descriptor, and the copy then cannot
            // be run ("Text file busy", once in CI).
            let copy = Process()
            copy.executableURL = URL(fileURLWithPath: "/bin/cp")
            copy.arguments = [ChildProcess.sluiceExecutable, binary]
            try copy.run()
            copy.waitUntilExit()
            #expect(copy.terminationStatus == 0)
            let run = try ChildProcess(
                arguments: ["serve", "--port", "0", "--data", directory.path + "/data"], directory: directory.path, binary: binary
            )
            let line = try await run.waitForLine(containing: "listening on http://127.0.0.1:")
            let port = Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespacesAndNewlines))!
            let index = try await RawHTTPClient.request(port: port, path: "/")
            #expect(index.status == 200)
            #expect(String(decoding: index.body, as: UTF8.self).contains("<html"))
            #expect(index.header("Content-Type")?.hasPrefix("text/html") == true)
            let spec = try await RawHTTPClient.request(port: port, path: "/openapi.yaml")
            #expect(spec.status == 200)
            #expect(spec.body == Array(try Data(contentsOf: URL(fileURLWithPath: Self.repositoryPublic + "/openapi.yaml"))))
            let script = try await RawHTTPClient.request(port: port, path: "/js/app.js")
            #expect(script.status == 200)
            #expect(try await RawHTTPClient.request(port: port, path: "/js/missing.js").status == 404)
            #expect(try await RawHTTPClient.request(port: port, method: "POST", path: "/index.html").status == 405)
            #expect(run.printedSoFar.stdout.contains("dashboard and openapi.yaml: built in"))
            run.signal(SIGTERM)
            #expect(try await run.finish(timeout: .seconds(10)).status == 0)
        }
    }

    /// The default `--data ./sluice-data` is relative: aria2's `dir` is reported absolute, so
    /// that AriaNg sending it back on every `addUri` is accepted (a `./` in it was refused).
    @Test func aRelativeDataDirectoryGivesAria2AnAbsoluteDirItAccepts() async throws {
        try await withTemporaryDirectory { directory in
            let run = try ChildProcess(arguments: ["serve", "--port", "0"], directory: directory.path)
            let line = try await run.waitForLine(containing: "listening on http://127.0.0.1:")
            let port = Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespacesAndNewlines))!
            func call(_ body: String) async throws -> [String: Any] {
                let reply = try await RawHTTPClient.request(port: port, method: "POST", path: "/jsonrpc", body: body)
                return try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
            }
            let options = try await call(#"{"jsonrpc":"2.0","id":1,"method":"aria2.getGlobalOption"}"#)
            let dir = try #require((options["result"] as? [String: Any])?["dir"] as? String)
            #expect(dir.hasPrefix("/") && !dir.contains("/./") && dir.hasSuffix("/sluice-data/documents"), "\(dir)")
            let added = try await call(
                #"{"jsonrpc":"2.0","id":2,"method":"aria2.addUri","params":[["http://127.0.0.1:9/x"],{"dir":"\#(dir)","pause":"true"}]}"#)
            #expect(added["result"] is String, "\(added)")
            run.signal(SIGTERM)
            #expect(try await run.finish(timeout: .seconds(10)).status == 0)
        }
    }

    static let repositoryPublic = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("public").path

    @Test func badIntegrationFlagsAreRefusedBeforeAnythingStarts() async throws {
        let cases: [([String], [String: String], String)] = [
            (["--webhook", "ftp://example.com/hook"], [:], "--webhook"),
            (["--proxy", "socks5://u:p@proxy:1080"], [:], "SOCKS5"),
            ([], ["https_proxy": "gopher://proxy:70"], "https_proxy"),
            (["--webhook-retry-for", "1.5h"], [:], "--webhook-retry-for"),
            (["--webhook-retention", "0s"], [:], "--webhook-retention"),
            ([], ["SLUICE_WEBHOOK_RETENTION": "forever"], "--webhook-retention"),
            (["--max-connections-per-host", "0"], [:], "--max-connections-per-host"),
            (["--host", "0.0.0.0", "--token", "t", "--webhook", "http://10.0.0.1/hook"], [:], "--allow-private-networks"),
        ]
        for (arguments, environment, named) in cases {
            try await withTemporaryDirectory { directory in
                let run = try ChildProcess(
                    arguments: ["serve", "--port", "0", "--data", directory.path + "/data"] + arguments, environment: environment
                )
                let (status, _, stderr) = try await run.finish(timeout: .seconds(10))
                #expect(status != 0, "\(arguments) \(environment)")
                #expect(stderr.contains(named), "\(arguments): \(stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory.path + "/data/sluice.sqlite"))
            }
        }
    }

    @Test func anEmptyTokenIsRefused() async throws {
        for (arguments, environment) in [(["--token", ""], [:]), ([], ["SLUICE_TOKEN": ""])] {
            let run = try ChildProcess(
                arguments: ["serve", "--port", "0", "--data", NSTemporaryDirectory() + "unused"] + arguments, environment: environment
            )
            let (status, stdout, stderr) = try await run.finish(timeout: .seconds(10))
            #expect(status != 0)
            #expect(stderr.contains("token is empty"), "\(stderr)")
            #expect(!stdout.contains("listening"))
        }
    }

    /// Under a low soft limit on open files, idle connections used to use up every
    /// descriptor, and `/healthz` stopped answering; the limit is raised at start.
    @Test func idleConnectionsDoNotUseUpTheFileLimit() async throws {
        try await withTemporaryDirectory { directory in
            let run = try ChildProcess(
                arguments: ["serve", "--port", "0", "--data", directory.path + "/data"], openFileLimit: 256
            )
            let line = try await run.waitForLine(containing: "listening on http://127.0.0.1:")
            let port = Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespacesAndNewlines))!
            let idle = IdleConnections()
            try idle.open(400, port: port, sending: "GET / HTTP/1.1\r\n")
            let start = ContinuousClock.now
            #expect(try await RawHTTPClient.request(port: port, path: "/healthz").status == 200)
            // Without the raised limit it never answered (the client gave up after 30 s).
            #expect(ContinuousClock.now - start < .seconds(10))
            idle.closeAll()
            run.signal(SIGTERM)
            #expect(try await run.finish(timeout: .seconds(10)).status == 0)
        }
    }

    @Test func badConfigurationIsAClearError() async throws {
        for environment in [
            ["SLUICE_PORT": "eighty"], ["SLUICE_MAX_ACTIVE": "0"], ["SLUICE_MAX_ACTIVE": "65"], ["SLUICE_LIMIT_RATE": "fast"],
            ["SLUICE_ALLOW_PRIVATE_NETWORKS": "maybe"], ["SLUICE_MAX_CONNECTIONS": "1"], ["SLUICE_MIN_FREE_SPACE": "lots"],
            ["SLUICE_ALLOWED_ORIGINS": "ariang.example"], ["SLUICE_ALLOWED_ORIGINS": "http://ok.example,http://a.example/path"],
            ["SLUICE_ALLOWED_ORIGINS": "ftp://a.example"],
        ] {
            let run = try ChildProcess(arguments: ["serve", "--data", NSTemporaryDirectory() + "unused"], environment: environment)
            let (status, _, stderr) = try await run.finish(timeout: .seconds(10))
            #expect(status != 0)
            #expect(stderr.contains(environment.keys.first!) || stderr.contains("--"), "\(stderr)")
        }
    }
}
