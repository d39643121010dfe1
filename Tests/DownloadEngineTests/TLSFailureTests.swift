@testable import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing
import X509

/// What a refused certificate tells a person, read from the certificate itself, as a table.
@Suite struct TLSFailureTests {
    static func leaf(_ pair: TestCertificateAuthority.Pair) throws -> Certificate {
        try Certificate(pemEncoded: try String(contentsOfFile: pair.certificateFile, encoding: .utf8))
    }

    @Test func eachProblemIsNamedDatesFirstThenNamesThenTrust() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ca = try TestCertificateAuthority(directory: directory.path, commonName: "Home Lab CA")
        let expiry = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28 20:26:40 UTC
        let rows: [(TestCertificateAuthority.Pair, String, String)] = [
            (
                try ca.issue("expired", notValidBefore: expiry - 86400, notValidAfter: expiry), "localhost",
                "the certificate of localhost expired on 2026-05-28 20:26:40 UTC"
            ),
            (
                try ca.issue("future", notValidBefore: Date() + 86400, notValidAfter: Date() + 2 * 86400), "localhost",
                "is not valid before"
            ),
            (
                try ca.issue("other", dnsNames: ["a.example", "b.example"], addresses: [[10, 0, 0, 1]]), "localhost",
                "the certificate of localhost is issued for a.example, b.example, 10.0.0.1, not localhost"
            ),
            (
                try ca.issue("wildcard", dnsNames: ["*.example.com"], addresses: []), "a.b.example.com",
                "is issued for *.example.com, not a.b.example.com"
            ),
            (try ca.issue("self", selfSigned: true), "localhost", "the certificate of localhost is self-signed"),
            (
                try ca.issue("good"), "localhost",
                "is not trusted: it was issued by O=Sluice tests,CN=Home Lab CA, which is not a trusted CA"
            ),
            (try ca.issue("address", dnsNames: [], addresses: [[127, 0, 0, 1]]), "127.0.0.1", "is not trusted"),
            (try ca.issue("wildcard-ok", dnsNames: ["*.example.com"], addresses: []), "www.example.com", "is not trusted"),
        ]
        for (pair, host, expected) in rows {
            let message = TLSFailure.certificateMessage(leaf: try Self.leaf(pair), host: host)
            #expect(message.contains(expected), "\(pair.certificateFile): \(message)")
            #expect(message.contains("certificate"))
        }
        #expect(TLSFailure.certificateMessage(leaf: nil, host: "h").contains("could not be verified"))
    }

    /// Issue 35, finding 7: a certificate's names are the remote's text, and reached the
    /// job's error raw, and from it the operator's terminal (`sluice wait` printed a
    /// retitle and a cleared screen). They are escaped, and only a few are shown.
    @Test func aCertificatesNamesReachTheErrorEscapedAndBounded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ca = try TestCertificateAuthority(directory: directory.path, commonName: "Home Lab CA")
        let hostile = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{7F}x.example"
        let many = (0..<50).map { "n\($0).example" }
        let pair = try ca.issue("hostile", dnsNames: [hostile] + many, addresses: [])
        let message = TLSFailure.certificateMessage(leaf: try Self.leaf(pair), host: "localhost")
        #expect(!message.unicodeScalars.contains(where: TerminalText.isUnsafe), "\(message.debugDescription)")
        #expect(message.contains(#"\e]0;owned\x07\e[2j\x7fx.example"#), "\(message.debugDescription)")
        #expect(message.contains("and 43 more"), "\(message)")
        #expect(message.utf8.count < 2_000)
    }

    @Test func handshakeFailuresAreToldApartFromDroppedConnections() {
        #expect(
            TLSFailure.protocolMessage(TestError("... WRONG_VERSION_NUMBER ..."), host: "h:1")
                == "h:1 does not speak TLS: if it serves plain HTTP, the URL should start with http://")
        #expect(TLSFailure.protocolMessage(TestError("something else"), host: "h") == "the TLS handshake with h failed (protocol error)")
        #expect(!TLSFailure.isHandshakeFailure(TestError("CERTIFICATE_VERIFY_FAILED")), "only the TLS library's own errors")
    }

    struct TestError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
