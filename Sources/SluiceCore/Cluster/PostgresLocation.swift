import Foundation

/// Where the cluster's database is: `postgres://user:password@host:port/database`
/// (`postgresql://` too), from `--store` or `SLUICE_STORE`. Percent-escapes in the user and
/// password are decoded; the password is never shown (`redacted`). TLS as libpq spells it:
/// `?sslmode=disable|allow|prefer|require|verify-ca|verify-full` (default `prefer`) and
/// `sslrootcert=FILE`, the CA certificates that verify the server (else the trust of
/// outgoing TLS: the system store and `--ca-file`).
public struct PostgresLocation: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode = .prefer
    public var sslRootCertificate: String?

    /// libpq's `sslmode`: whether TLS is used, and what of the server's certificate is checked.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it; nothing checked (libpq's `allow` is taken as `prefer`).
        case prefer
        /// TLS or no connection; the certificate is not checked.
        case require
        /// TLS, the certificate's chain checked against the trusted CAs.
        case verifyCA = "verify-ca"
        /// TLS, the chain and the host name checked.
        case verifyFull = "verify-full"
    }

    /// Whether `text` names a PostgreSQL store at all (the alternative being SQLite).
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    public init(_ text: String) throws {
        guard Self.isPostgres(text), let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            throw SluiceError(.invalidField, "--store must be postgres://user:password@host:port/database", field: "store")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw SluiceError(.invalidField, "--store names no user: postgres://user:password@host:port/database", field: "store")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw SluiceError(.invalidField, "--store names no database: postgres://user:password@host:port/database", field: "store")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else {
            throw SluiceError(.invalidField, "--store has a port out of range", field: "store")
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.port = port
        self.username = user
        self.password = components.percentEncodedPassword?.removingPercentEncoding
        self.database = database
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                let value = item.value == "allow" ? "prefer" : item.value ?? ""
                guard let mode = SSLMode(rawValue: value) else {
                    throw SluiceError(
                        .invalidField, "--store: sslmode must be disable, allow, prefer, require, verify-ca or verify-full",
                        field: "store"
                    )
                }
                sslMode = mode
            case "sslrootcert":
                guard let file = item.value, !file.isEmpty else {
                    throw SluiceError(.invalidField, "--store: sslrootcert names no file", field: "store")
                }
                sslRootCertificate = file
            default:
                throw SluiceError(
                    .invalidField, "--store: unknown parameter \(item.name) (sslmode and sslrootcert are understood)", field: "store"
                )
            }
        }
    }

    /// The location with no password, for logs.
    public var redacted: String { "postgres://\(username)@\(host):\(port)/\(database)" }
}
