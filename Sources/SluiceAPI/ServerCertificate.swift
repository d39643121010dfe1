import Foundation
public import Logging
import NIOCore
public import NIOSSL
import SluiceCore
import Synchronization

/// The certificate and key the service's port is served with (`--tls-cert`, `--tls-key`),
/// read again on SIGHUP: a renewal takes effect for new connections while open ones go on
/// with the pair they began with. A pair that cannot be used — unreadable, not PEM, a key
/// that does not match the certificate — is refused at start and, on a reload, logged
/// while the pair in use is kept. The certificate is not checked against any trust store:
/// whoever runs the service chose it.
public final class ServerCertificate: Sendable {
    public let certificatePath: String
    public let keyPath: String
    private let context: Mutex<NIOSSLContext>

    /// Reads the pair; throws a `SluiceError` that says what is wrong with it.
    public init(certificatePath: String, keyPath: String) throws {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.context = Mutex(try Self.load(certificatePath: certificatePath, keyPath: keyPath))
    }

    /// The context new connections use.
    public var current: NIOSSLContext { context.withLock { $0 } }

    /// Reads the pair again; on failure logs why and keeps the one in use.
    @discardableResult
    public func reload(logger: Logger) -> Bool {
        do {
            let fresh = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
            context.withLock { $0 = fresh }
            logger.info("TLS certificate reloaded", metadata: ["certificate": "\(certificatePath)"])
            return true
        } catch {
            let reason = (error as? SluiceError)?.message ?? "\(error)"
            logger.error("TLS certificate not reloaded, the previous one stays in use: \(reason)")
            return false
        }
    }

    /// TLS 1.2 and 1.3, ALPN `h2` then `http/1.1`.
    static func load(certificatePath: String, keyPath: String) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw SluiceError(.invalidField, "cannot read a PEM certificate from \(certificatePath)", field: "tls-cert")
        }
        guard !chain.isEmpty else {
            throw SluiceError(.invalidField, "\(certificatePath) holds no PEM certificate", field: "tls-cert")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw SluiceError(.invalidField, "cannot read a PEM private key from \(keyPath)", field: "tls-key")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = .tlsv12
        // A client that never answers close_notify holds a shutdown for 1 s, not 5.
        configuration.shutdownTimeout = .seconds(1)
        configuration.applicationProtocols = ["h2", "http/1.1"]
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            // BoringSSL refuses a key whose public half is not the certificate's.
            throw SluiceError(.invalidField, "the key in \(keyPath) does not match the certificate in \(certificatePath)", field: "tls-key")
        }
    }
}
