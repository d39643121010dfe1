import Foundation
import SluiceTestSupport
import Testing

/// `sluice get` against an HTTPS origin (the service's own `serve --tls-cert`) with
/// certificates from a CA the tests make: trusted as curl users trust one, and each way a
/// certificate goes wrong failing at once with a message a person can act on.
@Suite struct TLSGetTests {
    /// What no message may show: the TLS library's internals.
    static let internals = ["NIOSSL", "BoringSSL", "handshake.cc", "CERTIFICATE_VERIFY_FAILED", "error:1000"]

    @Test func aPrivateCAIsTrustedByCacertOrSSLCertFile() async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestCertificateAuthority(directory: directory.path)
            let leaf = try ca.issue("leaf")
            try await TLSOrigin.with(leaf, data: directory.path + "/origin") { origin in
                let url = origin.url("/testdata/3M?seed=5")
                let byFile = try ChildProcess(arguments: ["get", url, "-o", directory.path + "/a.bin", "--cacert", ca.certificateFile])
                let first = try await byFile.finish()
                #expect(first.status == 0, "\(first.stderr)")
                #expect(try GetCommandTests.sha256(directory.path + "/a.bin") == GetCommandTests.expected(size: 3 << 20, seed: 5))
                // OpenSSL's variable replaces the system store, as curl and openssl read it.
                let byEnvironment = try ChildProcess(
                    arguments: ["get", origin.url("/testdata/1M", host: "127.0.0.1"), "-o", directory.path + "/b.bin"],
                    environment: ["SSL_CERT_FILE": ca.certificateFile, "SSL_CERT_DIR": ""]
                )
                let second = try await byEnvironment.finish()
                #expect(second.status == 0, "\(second.stderr)")
            }
        }
    }

    /// Each certificate problem fails in well under the first retry round, with exit 60,
    /// the word "certificate" and what is wrong.
    @Test(arguments: [
        ("untrusted", "CN=Other CA, which is not a trusted CA"),
        ("expired", "expired on"),
        ("other-name", "is issued for other.example, not localhost"),
        ("self-signed", "is self-signed"),
    ])
    func eachCertificateProblemFailsAtOnceAndSaysWhich(kind: String, expected: String) async throws {
        try await withTemporaryDirectory { directory in
            let trusted = try TestCertificateAuthority(directory: directory.path)
            let other = try TestCertificateAuthority(directory: directory.path, commonName: "Other CA")
            let leaf: TestCertificateAuthority.Pair =
                switch kind {
                case "untrusted": try other.issue("leaf")
                case "expired": try trusted.issue("leaf", notValidBefore: Date() - 10 * 86400, notValidAfter: Date() - 86400)
                case "other-name": try trusted.issue("leaf", dnsNames: ["other.example"], addresses: [])
                default: try trusted.issue("leaf", selfSigned: true)
                }
            try await TLSOrigin.with(leaf, data: directory.path + "/origin") { origin in
                let start = ContinuousClock.now
                let run = try ChildProcess(
                    arguments: ["get", origin.url("/testdata/1M"), "-o", directory.path + "/x.bin", "--cacert", trusted.certificateFile]
                )
                let (status, _, stderr) = try await run.finish()
                #expect(status == 60, "\(stderr)")
                // The first retry round alone would take 1 + 2 + 4 + 8 s.
                #expect(ContinuousClock.now - start < .seconds(10), "no retry round")
                #expect(stderr.contains("sluice: the certificate of localhost"), "\(stderr)")
                #expect(stderr.contains(expected), "\(stderr)")
                for leak in Self.internals { #expect(!stderr.contains(leak), "\(stderr)") }
                // -k skips the check for that download.
                let insecure = try ChildProcess(arguments: ["get", origin.url("/testdata/1M"), "-o", directory.path + "/k.bin", "-k"])
                let skipped = try await insecure.finish()
                #expect(skipped.status == 0, "\(skipped.stderr)")
                #expect(try GetCommandTests.sha256(directory.path + "/k.bin") == GetCommandTests.expected(size: 1 << 20))
            }
        }
    }

    @Test func aServerThatDoesNotSpeakTLSIsAProtocolFailureNotACertificateOne() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let run = try ChildProcess(arguments: ["get", "https://127.0.0.1:\(port)/testdata/1K", "-o", directory.path + "/p.bin"])
                let (status, _, stderr) = try await run.finish()
                #expect(status == 60, "\(stderr)")
                #expect(stderr.contains("does not speak TLS"), "\(stderr)")
                for leak in Self.internals { #expect(!stderr.contains(leak), "\(stderr)") }
            }
        }
    }

    @Test func aCacertThatIsNotPEMIsAUsageError() async throws {
        try await withTemporaryDirectory { directory in
            let bogus = directory.path + "/bogus.pem"
            try "not a certificate".write(toFile: bogus, atomically: true, encoding: .utf8)
            let run = try ChildProcess(arguments: ["get", "https://127.0.0.1:1/x", "--cacert", bogus])
            let (status, _, stderr) = try await run.finish()
            #expect(status == 64)
            #expect(stderr.contains(bogus))
        }
    }
}

/// `sluice get` through Debian's Squid, chosen by `--proxy` or by curl's variables.
@Suite(.serialized, .enabled(if: TestSquid.unavailable == nil, "Squid: \(TestSquid.unavailable ?? "")"))
struct GetThroughSquidTests {
    @Test(arguments: ["flag", "http_proxy"])
    func getGoesThroughSquid(chosenBy: String) async throws {
        let squid = try TestSquid.proxy().get()
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let url = "http://127.0.0.1:\(port)/testdata/2M?seed=3"
                let file = directory.path + "/out.bin"
                let run =
                    chosenBy == "flag"
                    ? try ChildProcess(arguments: ["get", url, "-o", file, "--proxy", squid.url])
                    : try ChildProcess(arguments: ["get", url, "-o", file], environment: ["http_proxy": squid.url, "no_proxy": ""])
                let (status, _, stderr) = try await run.finish()
                #expect(status == 0, "\(stderr)")
                #expect(try GetCommandTests.sha256(file) == GetCommandTests.expected(size: 2 << 20, seed: 3))
                // Squid logs URLs without their query; the origin's port is this test's own.
                #expect(
                    try await squid.waitForLogLine(containing: " GET http://127.0.0.1:\(port)/testdata/2M"), "\(squid.logged.suffix(2000))")
            }
        }
    }

    @Test func noProxyStillGoesDirect() async throws {
        let squid = try TestSquid.proxy().get()
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let url = "http://127.0.0.1:\(port)/testdata/1M"
                let run = try ChildProcess(
                    arguments: ["get", url, "-o", directory.path + "/d.bin"],
                    environment: ["http_proxy": squid.url, "no_proxy": "127.0.0.1"]
                )
                #expect(try await run.finish().status == 0)
                #expect(!(try await squid.waitForLogLine(containing: "127.0.0.1:\(port)/", timeout: .seconds(1))))
            }
        }
    }
}
