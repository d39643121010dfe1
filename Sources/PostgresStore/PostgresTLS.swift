import SluiceTLS
import NIOSSL
import PostgresNIO
import SluiceCore

/// The store's connection TLS from the URL's `sslmode` and `sslrootcert` (libpq's names):
/// `prefer` and `require` encrypt without checking the certificate, as libpq does;
/// `verify-ca` checks its chain against `sslrootcert` (else the trust of outgoing TLS),
/// `verify-full` the host name too.
enum PostgresTLS {
    /// Whether TLS is used, and with which settings.
    enum Choice {
        case disable
        case prefer(TLSConfiguration)
        case require(TLSConfiguration)
    }

    static func choice(for location: PostgresLocation, trust: TLSTrust) throws -> Choice {
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
            return .prefer(tls)
        case .require:
            tls.certificateVerification = .none
            return .require(tls)
        case .verifyCA:
            tls.certificateVerification = .noHostnameVerification
            return .require(tls)
        case .verifyFull:
            tls.certificateVerification = .fullVerification
            return .require(tls)
        }
    }

    /// For a connection of its own (the listener's).
    static func configuration(for location: PostgresLocation, trust: TLSTrust) throws -> PostgresConnection.Configuration.TLS {
        switch try choice(for: location, trust: trust) {
        case .disable: return .disable
        case .prefer(let tls): return .prefer(try context(tls))
        case .require(let tls): return .require(try context(tls))
        }
    }

    /// For the pool (`PostgresClient`), whose connections share the settings.
    static func clientConfiguration(for location: PostgresLocation, trust: TLSTrust) throws -> PostgresClient.Configuration.TLS {
        switch try choice(for: location, trust: trust) {
        case .disable: return .disable
        case .prefer(let tls):
            _ = try context(tls)  // refused here as for a connection of its own
            return .prefer(tls)
        case .require(let tls):
            _ = try context(tls)
            return .require(tls)
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
