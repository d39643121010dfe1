import Foundation


/// Where the cluster's database is: `postgres://user:password@host:port/database`
/// (`postgresql://` too), from `--store` or `SLUICE_STORE`. Percent-escapes in the user and
/// password are decoded; the password is never shown (`redacted`).
public struct PostgresLocation: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String

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
    }

    /// The location with no password, for logs.
    public var redacted: String { "postgres://\(username)@\(host):\(port)/\(database)" }
}
