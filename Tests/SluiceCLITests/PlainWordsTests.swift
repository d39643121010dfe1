#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 36: what a person reads when a download goes wrong. Each failure says what
/// happened in plain words with the `host:port`, and a next step where there is one; no
/// type name, errno string or library wording; `get` shows each retry on a pipe too, and
/// leaves nothing behind when it failed before writing a byte.
@Suite struct PlainWordsTests {
    static func expectPlain(_ text: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(LibraryWording.found(in: text) == nil, "\(context): \(text.debugDescription)", sourceLocation: sourceLocation)
    }

    /// A loopback port nothing listens on.
    static func closedPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func get(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess(arguments: ["get", "--retry-wait", "0.05"] + arguments).finish(timeout: .seconds(60))
    }

    @Test func aRefusedConnectionIsSaidWithItsPortEachRetryShowsAndNothingIsLeft() async throws {
        try await withTemporaryDirectory { directory in
            let port = try Self.closedPort()
            let file = directory.path + "/out.bin"
            let run = try await Self.get(["http://127.0.0.1:\(port)/x", "-o", file])
            #expect(run.status == 3)
            #expect(run.stderr.contains("127.0.0.1:\(port) refused the connection"), "\(run.stderr)")
            #expect(run.stderr.contains("retrying in"), "retries were silent on a pipe: \(run.stderr)")
            Self.expectPlain(run.stderr, "refused")
            #expect(!FileManager.default.fileExists(atPath: file), "an empty file was left behind")
            #expect(!FileManager.default.fileExists(atPath: file + ".sluice"))
        }
    }

    @Test func aPartialFileGivenWithContinueIsLeftAsItWas() async throws {
        try await withTemporaryDirectory { directory in
            let port = try Self.closedPort()
            let file = directory.path + "/part.bin"
            try Data("the first bytes".utf8).write(to: URL(fileURLWithPath: file))
            let run = try await Self.get(["-c", "http://127.0.0.1:\(port)/x", "-o", file])
            #expect(run.status == 3)
            #expect(FileManager.default.contents(atPath: file) == Data("the first bytes".utf8))
        }
    }

    @Test func notFoundAndNoSuchHostLeaveNothingAndSayWhy() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let missing = directory.path + "/missing.bin"
                let notFound = try await Self.get(["http://127.0.0.1:\(port)/files/nothing-here", "-o", missing])
                #expect(notFound.status == 4, "\(notFound.stderr)")
                #expect(notFound.stderr.contains("404"), "\(notFound.stderr)")
                #expect(!FileManager.default.fileExists(atPath: missing))
                Self.expectPlain(notFound.stderr, "404")
            }
            let nowhere = directory.path + "/nowhere.bin"
            let unknown = try await Self.get(["http://no-such-host.invalid/x", "-o", nowhere])
            #expect(unknown.stderr.contains("no such host: no-such-host.invalid"), "\(unknown.stderr)")
            #expect(!FileManager.default.fileExists(atPath: nowhere))
            Self.expectPlain(unknown.stderr, "unknown host")
        }
    }

    @Test func tlsOnAPlainPortAndPlainOnATLSPortAreToldApart() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let run = try await Self.get(["https://127.0.0.1:\(port)/testdata/1K", "-o", directory.path + "/a.bin"])
                #expect(run.stderr.contains("127.0.0.1:\(port) does not speak TLS"), "\(run.stderr)")
                #expect(run.stderr.contains("http://"), "no hint of the scheme: \(run.stderr)")
                Self.expectPlain(run.stderr, "https to plain")
            }
            let ca = try TestCertificateAuthority(directory: directory.path, commonName: "Words CA")
            let pair = try ca.issue("server")
            try await TLSOrigin.with(pair, data: directory.path + "/tls-data") { origin in
                let run = try await Self.get(["http://127.0.0.1:\(origin.port)/testdata/1K", "-o", directory.path + "/b.bin"])
                #expect(run.stderr.contains("127.0.0.1:\(origin.port)"), "\(run.stderr)")
                #expect(run.stderr.contains("https://"), "no hint of the scheme: \(run.stderr)")
                Self.expectPlain(run.stderr, "plain to TLS")
                #expect(!FileManager.default.fileExists(atPath: directory.path + "/b.bin"))
            }
        }
    }

    @Test func aBusyPortIsNamedWithTheFlagToChangeItAndNothingIsClaimed() async throws {
        try await withTemporaryDirectory { directory in
            try await ChildProcess.serving(data: directory.path + "/first", []) { url in
                let port = try #require(url.split(separator: ":").last.flatMap { Int($0) })
                let second = try ChildProcess(arguments: ["serve", "--port", "\(port)", "--data", directory.path + "/second"])
                let run = try await second.finish(timeout: .seconds(20))
                #expect(run.status != 0)
                #expect(run.stderr.contains("127.0.0.1:\(port)") && run.stderr.contains("--port"), "\(run.stderr)")
                #expect(!(run.stdout + run.stderr).contains("checkpointed"), "\(run.stdout) \(run.stderr)")
                Self.expectPlain(run.stdout + run.stderr, "busy port")
            }
        }
    }

    @Test func aMissingTokenSaysHowToGiveOne() async throws {
        try await withTemporaryDirectory { directory in
            try await ChildProcess.serving(data: directory.path + "/data", ["--token", "words-token"]) { url in
                let run = try await ChildProcess(arguments: ["ls", "--server", url], environment: [:]).finish(timeout: .seconds(30))
                #expect(run.status == 1)
                #expect(run.stderr.contains("SLUICE_TOKEN") && run.stderr.contains("--token-file"), "\(run.stderr)")
                let unreachable = try await ChildProcess(
                    arguments: ["ls", "--server", "http://127.0.0.1:\(try Self.closedPort())"], environment: [:]
                ).finish(timeout: .seconds(30))
                #expect(unreachable.stderr.contains("refused the connection"), "\(unreachable.stderr)")
                Self.expectPlain(unreachable.stderr, "client unreachable")
            }
        }
    }

    /// A TLS client on the plain port logged 15 errors in a library's words; now one line.
    @Test func aTLSHandshakeOnThePlainPortIsOneLineInPlainWords() async throws {
        try await withTemporaryDirectory { directory in
            let serve = try ChildProcess(arguments: ["serve", "--port", "0", "--data", directory.path + "/data"])
            let line = try await serve.waitForLine(containing: "listening on http://127.0.0.1:")
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) })
            let hello = IdleConnections()
            defer { hello.closeAll() }
            try hello.open(1, port: port, sending: "\u{16}\u{03}\u{01}\u{02}\u{05}\u{01}\u{01}\u{0F}\u{03}\u{03}")
            #expect(await hello.closedByServer(within: 10) == 1)
            serve.signal(SIGTERM)
            let run = try await serve.finish(timeout: .seconds(20))
            let output = run.stdout + run.stderr
            let told = output.split(separator: "\n").filter { $0.contains("TLS handshake") }
            #expect(told.count == 1, "\(output)")
            #expect(told.first?.contains("--tls-cert") == true, "\(output)")
            #expect(!output.contains("HummingbirdWebSocket") && !output.contains("upgrade result"), "\(output)")
        }
    }

    @Test func aURLWithoutItsSchemeGetsTheCorrectedURLAsAHint() throws {
        do {
            try CreateJobRequest.validateURL("127.0.0.1:8080/x")
            Issue.record("taken")
        } catch let error as SluiceError {
            #expect(error.message.contains("did you mean http://127.0.0.1:8080/x?"), "\(error.message)")
        }
        do {
            try CreateJobRequest.validateURL("example.com/a.iso")
            Issue.record("taken")
        } catch let error as SluiceError {
            #expect(error.message.contains("did you mean http://example.com/a.iso?"), "\(error.message)")
        }
        #expect(CreateJobRequest.schemeHint("javascript:alert(1)") == nil)
        #expect(CreateJobRequest.schemeHint("ftp://h/x") == nil)
    }
}
