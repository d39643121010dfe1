import Foundation
import NIOSSL
import SluiceCore
import SwiftASN1
import X509

/// What a failed TLS handshake tells a person: never the TLS library's error stack, but
/// which of the few things went wrong — a certificate not trusted (and who issued it),
/// expired (when), issued for other names (which), or a handshake that failed for another
/// reason. Such a failure is final (`tls`): retrying cannot change a certificate.
enum TLSFailure {
    /// Whether `error` is a TLS handshake that failed, as opposed to a connection that was
    /// cut (those stay network errors, retried).
    static func isHandshakeFailure(_ error: any Error) -> Bool {
        if let error = error as? NIOSSLError, case .handshakeFailed(let inner) = error {
            // A peer that closes mid-handshake is a dropped connection, not a TLS problem.
            return !String(describing: inner).contains("EOF during handshake") && !isSyscall(inner)
        }
        if let error = error as? NIOSSLExtraError {
            return error == .failedToValidateHostname || error == .serverHostnameImpossibleToMatch
        }
        return false
    }

    /// Whether the handshake failed on the peer's certificate (chain, dates or name).
    static func isCertificateFailure(_ error: any Error) -> Bool {
        if error is NIOSSLExtraError { return true }
        return String(describing: error).contains("CERTIFICATE_VERIFY_FAILED")
    }

    private static func isSyscall(_ error: BoringSSLError) -> Bool {
        if case .syscallError = error { return true }
        return false
    }

    /// A server that answered a TLS hello with something else (plain HTTP).
    static func notTLS(_ host: String) -> String {
        "\(host) does not speak TLS: if it serves plain HTTP, the URL should start with http://"
    }

    /// The message for a handshake that failed for a reason other than the certificate.
    static func protocolMessage(_ error: any Error, host: String) -> String {
        let text = String(describing: error)
        let reasons: [(String, String)] = [
            ("WRONG_VERSION_NUMBER", notTLS(host)),
            ("UNSUPPORTED_PROTOCOL", "the TLS handshake with \(host) failed: no TLS version in common (TLS 1.2 or 1.3 is needed)"),
            ("PROTOCOL_VERSION", "the TLS handshake with \(host) failed: no TLS version in common (TLS 1.2 or 1.3 is needed)"),
            ("NO_SHARED_CIPHER", "the TLS handshake with \(host) failed: no cipher in common"),
            ("CERTIFICATE_REQUIRED", "the TLS handshake with \(host) failed: the server asks for a client certificate"),
        ]
        for (reason, message) in reasons where text.contains(reason) { return message }
        return "the TLS handshake with \(host) failed (protocol error)"
    }

    /// Why the certificate `leaf` that `host` presented was refused, read from the
    /// certificate itself: dates first, then names, else the chain is not trusted.
    static func certificateMessage(leaf: Certificate?, host: String, now: Date = Date()) -> String {
        guard let leaf else {
            return "the certificate of \(host) could not be verified (not trusted, expired or issued for another name)"
        }
        if leaf.notValidAfter < now {
            return "the certificate of \(host) expired on \(day(leaf.notValidAfter))"
        }
        if leaf.notValidBefore > now {
            return "the certificate of \(host) is not valid before \(day(leaf.notValidBefore))"
        }
        let names = CertificateNames(leaf)
        if !names.matches(host) {
            let shown = names.all.prefix(Self.namesShown).map(Self.shown)
            let more = names.all.count > Self.namesShown ? ", and \(names.all.count - Self.namesShown) more" : ""
            let listed = names.all.isEmpty ? "no name" : shown.joined(separator: ", ") + more
            return "the certificate of \(host) is issued for \(listed), not \(host)"
        }
        let issuer = Self.shown(leaf.issuer.description)
        if leaf.issuer == leaf.subject {
            return "the certificate of \(host) is self-signed (\(issuer)) and not trusted"
        }
        return "the certificate of \(host) is not trusted: it was issued by \(issuer), which is not a trusted CA"
    }

    /// A certificate's names are the remote's text: at most this many are shown, each
    /// escaped (`TerminalText`: no escape sequence reaches a terminal that prints the job's
    /// error) and cut to `nameLength` characters.
    static let namesShown = 8
    static let nameLength = 128

    static func shown(_ name: String) -> String {
        let safe = TerminalText.safe(name)
        return safe.count > nameLength ? String(safe.prefix(nameLength)) + "…" : safe
    }

    private static func day(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }
}

/// The DNS names and addresses a certificate is issued for (its subject alternative names,
/// else its common name), and RFC 6125's matching of a host against them.
struct CertificateNames {
    var dnsNames: [String] = []
    var addresses: [[UInt8]] = []

    init(_ certificate: Certificate) {
        if let names = try? certificate.extensions.subjectAlternativeNames {
            for name in names {
                switch name {
                case .dnsName(let dns): dnsNames.append(dns.lowercased())
                case .ipAddress(let octets): addresses.append(Array(octets.bytes))
                default: break
                }
            }
        }
        if dnsNames.isEmpty, addresses.isEmpty {
            for attribute in certificate.subject.flatMap({ $0 }) where attribute.type == .RDNAttributeType.commonName {
                dnsNames.append(String(describing: attribute.value).lowercased())
            }
        }
    }

    var all: [String] {
        dnsNames + addresses.compactMap { IPAddress(bytes: $0)?.description }
    }

    func matches(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if let address = IPAddress(host: name) {
            return addresses.contains(address.bytes)
        }
        return dnsNames.contains { pattern in
            if pattern == name { return true }
            // `*.example.com` covers exactly one label.
            guard pattern.hasPrefix("*."), let dot = name.firstIndex(of: ".") else { return false }
            return name[dot...] == pattern.dropFirst()
        }
    }
}
