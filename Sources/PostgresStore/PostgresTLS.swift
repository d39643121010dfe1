import DownloadEngine
import NIOSSL
import PostgresNIO
import SluiceCore

/// The store's connection TLS from the URL's `sslmode` and `sslrootcert` (libpq's names):
/// `prefer` and `require` encrypt without checking the certificate, as libpq does;
/// `verify-ca` checks its chain against `sslrootcert` (else the trust of outgoing TLS),
/// `verify-full` the host name too.
enum PostgresTLS {
    static func configuration(for location: PostgresLocation, trust: TLSTrust) throws -> PostgresConnection.Configuration.TLS {
        var tls = trust.clientConfiguration()
        if let file = location.sslRootCertificate {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
            } catch {
                throw SluiceError(.invalidField, "--store: cannot read PEM certificates from sslrootcert \(file)", field: "store")
            }
            tls.additionalTrustRoots = []
        }
        switch location.sslMode {
        case .disable:
            return .disable
        case .prefer:
            tls.certificateVerification = .none
            return .prefer(try context(tls))
        case .require:
            tls.certificateVerification = .none
            return .require(try context(tls))
        case .verifyCA:
            tls.certificateVerification = .noHostnameVerification
            return .require(try context(tls))
        case .verifyFull:
            tls.certificateVerification = .fullVerification
            return .require(try context(tls))
        }
    }

    private static func context(_ configuration: TLSConfiguration) throws -> NIOSSLContext {
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw SluiceError(.invalidField, "--store: the TLS settings cannot be used", field: "store")
        }
    }
}
