import Foundation
public import NIOSSL
import NIOCore
import SluiceCore

/// What outgoing TLS trusts, as curl and OpenSSL users expect: the system's store, or what
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` name instead of it when they are set (OpenSSL's
/// variables, a PEM bundle and a directory of hashed PEM files), plus the certificates of
/// `--ca-file` / `--cacert`. A client certificate and key, when given, are offered to servers
/// that ask for one (mutual TLS).
public struct TLSTrust: Sendable {
    /// The PEM bundle that replaces the system store (`SSL_CERT_FILE`), and its
    /// certificates, read at start when a directory is named too (the library reads only
    /// one location itself).
    public var bundleFile: String?
    var bundleCertificates: [NIOSSLCertificate] = []
    /// The directory of CA certificates that replaces the system store (`SSL_CERT_DIR`).
    public var bundleDirectory: String?
    /// Certificates trusted beside the store (`--ca-file`), loaded once.
    public var extraRoots: [NIOSSLCertificate]
    /// A client certificate chain and its key (`--cert`, `--key`).
    public var clientChain: [NIOSSLCertificate]
    public var clientKey: NIOSSLPrivateKey?

    public static let system = TLSTrust(bundleFile: nil, bundleDirectory: nil, extraRoots: [], clientChain: [], clientKey: nil)

    /// The trust `environment` and the given files describe. A file that cannot be read, or
    /// holds no PEM certificate, is an error naming it (`field` says which setting gave it),
    /// so a typo never silently falls back to the system store.
    public static func make(
        caFile: String?, clientCertificate: String? = nil, clientKey: String? = nil, environment: [String: String],
        caField: String = "ca-file"
    ) throws -> TLSTrust {
        var trust = TLSTrust.system
        if let directory = environment["SSL_CERT_DIR"], !directory.isEmpty {
            // OpenSSL takes a list separated by colons; the first is what this library can use.
            let first = String(directory.split(separator: ":").first ?? Substring(directory))
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: first, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw SluiceError(.invalidField, "SSL_CERT_DIR names \(first), which is not a directory", field: "SSL_CERT_DIR")
            }
            trust.bundleDirectory = first
        }
        if let file = environment["SSL_CERT_FILE"], !file.isEmpty {
            trust.bundleFile = file
            let certificates = try certificates(in: file, field: "SSL_CERT_FILE")
            if trust.bundleDirectory != nil { trust.bundleCertificates = certificates }
        }
        if let caFile { trust.extraRoots = try certificates(in: caFile, field: caField) }
        switch (clientCertificate, clientKey) {
        case (nil, nil):
            break
        case (let certificate?, let key?):
            trust.clientChain = try certificates(in: certificate, field: "cert")
            do {
                trust.clientKey = try NIOSSLPrivateKey(file: key, format: .pem)
            } catch {
                throw SluiceError(.invalidField, "cannot read a PEM private key from \(key)", field: "key")
            }
        default:
            throw SluiceError(
                .invalidField, "a client certificate needs both --cert and --key", field: clientCertificate == nil ? "cert" : "key")
        }
        return trust
    }

    /// The PEM certificates in `path`: at least one, else an error that names the file.
    static func certificates(in path: String, field: String) throws -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw SluiceError(.invalidField, "cannot read PEM certificates from \(path)", field: field)
        }
        guard !certificates.isEmpty else {
            throw SluiceError(.invalidField, "\(path) holds no PEM certificate", field: field)
        }
        return certificates
    }

    /// A client configuration: verification on, or off for `insecure` (`-k`, a job's
    /// `"insecure": true` where the service allows it).
    public func clientConfiguration(insecure: Bool = false) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        // A connection a download gives up mid-body (a segment split, a stop) sends its
        // close_notify and would wait 5 s (the library's default) for the server's, which
        // never comes while the server is still sending the body nobody reads: measured as
        // a 5 s stall per abandoned connection with -x4 over TLS (bench/RESULTS.md).
        configuration.shutdownTimeout = .milliseconds(100)
        if insecure {
            configuration.certificateVerification = .none
        }
        switch (bundleFile, bundleDirectory) {
        case (let file?, nil):
            configuration.trustRoots = .file(file)
        case (.some, let directory?):
            configuration.trustRoots = .file(directory)
            configuration.additionalTrustRoots.append(.certificates(bundleCertificates))
        case (nil, let directory?):
            configuration.trustRoots = .file(directory)
        case (nil, nil):
            configuration.trustRoots = .default
        }
        if !extraRoots.isEmpty {
            configuration.additionalTrustRoots.append(.certificates(extraRoots))
        }
        if let clientKey, !clientChain.isEmpty {
            configuration.certificateChain = clientChain.map { .certificate($0) }
            configuration.privateKey = .privateKey(clientKey)
        }
        return configuration
    }
}
