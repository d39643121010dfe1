#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// `sluice serve --tls-cert --tls-key`: every route over TLS with HTTP/2 by ALPN, nothing
/// answered in plain HTTP, and a renewed certificate taken on SIGHUP.
@Suite struct TLSServeTests {
    /// Runs `curl ARGUMENTS` and returns its exit status and standard output.
    static func curl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await Task.detached {
            try Spawned.run("/usr/bin/env", ["curl", "-sS", "--max-time", "10"] + arguments)
        }.value
        return (result.status, String(decoding: result.stdout, as: UTF8.self))
    }

    @Test func everyRouteOverTLSWithHTTP2ByALPNAndHTTP1WithoutIt() async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestCertificateAuthority(directory: directory.path)
            let leaf = try ca.issue("leaf")
            try await TLSOrigin.with(leaf, data: directory.path + "/data") { origin in
                let trust = ["--cacert", ca.certificateFile]
                let h2 = try await Self.curl(
                    trust + ["--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", origin.url("/healthz")])
                #expect(h2.output == "2 200", "\(h2)")
                let h1 = try await Self.curl(
                    trust + ["--http1.1", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", origin.url("/healthz")])
                #expect(h1.output == "1.1 200", "\(h1)")
                // A client that offers no ALPN at all gets HTTP/1.1.
                let none = try await Self.curl(
                    trust + ["--no-alpn", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", origin.url("/healthz")])
                #expect(none.output == "1.1 200", "\(none)")
                // The origin's range semantics are the same over HTTP/2.
                let range = try await Self.curl(
                    trust + [
                        "--http2", "-r", "10-19", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", origin.url("/testdata/1M"),
                    ]
                )
                #expect(range.output == "206 10", "\(range)")
                // The API and the dashboard too.
                let jobs = try await Self.curl(trust + ["--http2", origin.url("/jobs")])
                #expect(jobs.output.hasPrefix(#"{"jobs":"#), "\(jobs)")
                let page = try await Self.curl(trust + ["--http2", "-o", "/dev/null", "-w", "%{http_code}", origin.url("/")])
                #expect(page.output == "200", "\(page)")
                // The healthcheck follows https with --cacert, and refuses an untrusted certificate.
                let healthy = try ChildProcess(arguments: ["healthcheck", "--url", origin.url(""), "--cacert", ca.certificateFile])
                #expect(try await healthy.finish().status == 0)
                let untrusted = try ChildProcess(arguments: ["healthcheck", "--url", origin.url("")], environment: ["SSL_CERT_DIR": ""])
                let refused = try await untrusted.finish()
                #expect(refused.status == 1)
                #expect(refused.stderr.contains("certificate of localhost is not trusted"), "\(refused.stderr)")
                #expect(!refused.stderr.contains("NIOSSL"), "\(refused.stderr)")
                // Over HTTP/2 the :authority is the Host the DNS-rebinding guard checks: 421,
                // as over HTTP/1.1 (a loopback bind without a token answers only loopback names).
                for version in ["--http2", "--http1.1"] {
                    let misdirected = try await Self.curl(
                        trust + [
                            version, "-H", "Host: attacker.example", "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                            origin.url("/jobs"),
                        ]
                    )
                    #expect(misdirected.output.hasSuffix(" 421"), "\(version): \(misdirected)")
                }
                let healthH2 = try await Self.curl(trust + ["--http2", origin.url("/healthz")])
                #expect(healthH2.output == #"{"status":"ok"}"#, "/healthz on the event loop over an HTTP/2 stream: \(healthH2)")
            }
        }
    }

    @Test func aPlainHTTPRequestToTheTLSPortIsNotAnsweredAsHTTP() async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestCertificateAuthority(directory: directory.path)
            try await TLSOrigin.with(try ca.issue("leaf"), data: directory.path + "/data") { origin in
                let plain = try await Self.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(origin.port)/healthz"])
                #expect(plain.status != 0)
                #expect(plain.output == "000", "\(plain)")
            }
        }
    }

    @Test func sighupServesARenewedCertificateAndKeepsTheOldOneWhenTheNewPairIsBroken() async throws {
        try await withTemporaryDirectory { directory in
            let first = try TestCertificateAuthority(directory: directory.path, commonName: "First CA")
            let second = try TestCertificateAuthority(directory: directory.path, commonName: "Second CA")
            let live = TestCertificateAuthority.Pair(
                certificateFile: directory.path + "/live.pem", keyFile: directory.path + "/live-key.pem"
            )
            @Sendable func install(_ pair: TestCertificateAuthority.Pair) throws {
                for (from, to) in [(pair.certificateFile, live.certificateFile), (pair.keyFile, live.keyFile)] {
                    try? FileManager.default.removeItem(atPath: to)
                    try FileManager.default.copyItem(atPath: from, toPath: to)
                }
            }
            try install(try first.issue("one"))
            try await TLSOrigin.with(live, data: directory.path + "/data") { origin in
                let url = origin.url("/healthz")
                #expect(try await Self.curl(["--cacert", first.certificateFile, url]).status == 0)
                // A download in progress over the old certificate goes on through the reload.
                let partial = directory.path + "/slow.bin"
                let slow = Task {
                    try await Self.curl([
                        "--cacert", first.certificateFile, "-o", partial, "-w", "%{size_download}",
                        origin.url("/testdata/2M?rate=1M"),
                    ])
                }
                // The download is under way (bytes on disk) before the certificate changes.
                let started = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < started,
                    ((try? FileManager.default.attributesOfItem(atPath: partial))?[.size] as? Int ?? 0) == 0
                {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try install(try second.issue("two"))
                origin.process.signal(SIGHUP)
                let deadline = ContinuousClock.now + .seconds(5)
                var renewed = false
                while ContinuousClock.now < deadline, !renewed {
                    renewed = try await Self.curl(["--cacert", second.certificateFile, url]).status == 0
                    if !renewed { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(renewed, "the renewed certificate is served within 5 s of SIGHUP")
                #expect(try await slow.value.output == "2097152", "the open connection was not dropped")
                // A key that does not match: logged, and the renewed pair stays.
                try FileManager.default.removeItem(atPath: live.keyFile)
                try FileManager.default.copyItem(atPath: try first.issue("three").keyFile, toPath: live.keyFile)
                origin.process.signal(SIGHUP)
                let logDeadline = ContinuousClock.now + .seconds(5)
                func logged() -> String { origin.process.printedSoFar.stdout + origin.process.printedSoFar.stderr }
                while ContinuousClock.now < logDeadline, !logged().contains("not reloaded") {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(logged().contains("not reloaded"))
                #expect(try await Self.curl(["--cacert", second.certificateFile, url]).status == 0)
            }
        }
    }

    @Test func sigtermStopsAServiceWhoseClientNeverFinishesItsHandshake() async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestCertificateAuthority(directory: directory.path)
            let process = try ChildProcess(
                arguments: [
                    "serve", "--port", "0", "--data", directory.path + "/data", "--tls-cert", try ca.issue("leaf").certificateFile,
                    "--tls-key", directory.path + "/leaf-key.pem",
                ]
            )
            let line = try await process.waitForLine(containing: "listening on https://127.0.0.1:")
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
            // Connections that hold a slot in the handshake: one silent, one half a hello.
            let silent = IdleConnections()
            try silent.open(1, port: port)
            try silent.open(1, port: port, sending: "\u{16}\u{03}\u{01}")
            defer { silent.closeAll() }
            let start = ContinuousClock.now
            process.signal(SIGTERM)
            let (status, _, _) = try await process.finish(timeout: .seconds(20))
            #expect(status == 0)
            #expect(ContinuousClock.now - start < .seconds(5), "not held by the handshakes in progress")
        }
    }

    @Test func anUnusablePairIsRefusedAtStart() async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestCertificateAuthority(directory: directory.path)
            let one = try ca.issue("one")
            let two = try ca.issue("two")
            let cases: [([String], String)] = [
                (["--tls-cert", one.certificateFile], "--tls-key"),
                (["--tls-cert", one.certificateFile, "--tls-key", two.keyFile], "does not match"),
                (["--tls-cert", directory.path + "/missing.pem", "--tls-key", one.keyFile], "missing.pem"),
            ]
            for (arguments, named) in cases {
                let run = try ChildProcess(arguments: ["serve", "--port", "0", "--data", directory.path + "/data"] + arguments)
                let (status, stdout, stderr) = try await run.finish(timeout: .seconds(10))
                #expect(status != 0)
                #expect(stderr.contains(named), "\(arguments): \(stderr)")
                #expect(!stdout.contains("listening"))
            }
        }
    }

    @Test(.enabled(if: TestPostgres.unavailable == nil && TestPostgres.certificateAuthority != nil, "PostgreSQL with TLS"))
    func aNodeConnectsToItsStoreWithVerifyFull() async throws {
        let ca = try #require(TestPostgres.certificateAuthority)
        let store = try TestPostgres.newDatabase() + "?sslmode=verify-full&sslrootcert=\(ca)"
        try await withTemporaryDirectory { directory in
            let node = try ChildProcess(
                arguments: ["serve", "--port", "0", "--data", directory.path + "/data", "--store", store, "--node-name", "tls-node"]
            )
            let line = try await node.waitForLine(containing: "listening on http://127.0.0.1:")
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
            let nodes = try await RawHTTPClient.request(port: port, path: "/nodes")
            #expect(nodes.status == 200)
            #expect(String(decoding: nodes.body, as: UTF8.self).contains("tls-node"))
            node.signal(SIGTERM)
            #expect(try await node.finish(timeout: .seconds(10)).status == 0)
        }
        // A CA that did not issue the server's certificate: the node does not start.
        try await withTemporaryDirectory { directory in
            let other = try TestCertificateAuthority(directory: directory.path, commonName: "Wrong CA")
            let refused = try TestPostgres.newDatabase() + "?sslmode=verify-full&sslrootcert=\(other.certificateFile)"
            let node = try ChildProcess(arguments: ["serve", "--port", "0", "--data", directory.path + "/data", "--store", refused])
            let (status, stdout, stderr) = try await node.finish(timeout: .seconds(30))
            #expect(status != 0)
            #expect(!stdout.contains("listening"))
            // Refused with a message, not a crash (it trapped on the HTTP client it dropped).
            #expect(!stderr.contains("Fatal error"), "\(stderr.prefix(400))")
        }
    }
}
