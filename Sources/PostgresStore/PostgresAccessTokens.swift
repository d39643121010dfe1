public import SluiceTLS
import Foundation
public import Logging
public import SluiceCore
import PostgresNIO

/// Named tokens in the cluster's PostgreSQL, so every node knows them: the job repository's
/// (`PostgresJobRepository.tokens`), or opened alone by `sluice token` (no node recorded).
public struct PostgresAccessTokens: TokenStore {
    let connections: PostgresConnections

    /// Connects and applies migrations, for a command that manages tokens only.
    public static func open(location: PostgresLocation, trust: TLSTrust = .system, logger: Logger) async throws -> PostgresAccessTokens {
        let connections = PostgresConnections(
            location: location, tls: try PostgresTLS.configuration(for: location, trust: trust),
            clientTLS: try PostgresTLS.clientConfiguration(for: location, trust: trust), size: 1, logger: logger
        )
        do {
            try await connections.checkReachable()
            _ = try await PostgresSchema.migrate(connections)
        } catch {
            connections.close()
            throw error
        }
        return PostgresAccessTokens(connections: connections)
    }

    public func close() { connections.close() }

    public func accessTokens() async throws -> [AccessToken] {
        try await connections.run("SELECT name, scope, digest, created_at FROM access_token ORDER BY name").rows.compactMap { row in
            let (name, scope, digest, created) = try row.decode((String, String, String, Double).self)
            return TokenScope(rawValue: scope).map {
                AccessToken(name: name, scope: $0, digest: digest, createdAt: Date(timeIntervalSince1970: created))
            }
        }
    }

    public func insertAccessToken(_ token: AccessToken) async throws {
        let rows = try await connections.run(
            """
            INSERT INTO access_token (name, scope, digest, created_at)
            VALUES (\(token.name), \(token.scope.rawValue), \(token.digest), \(token.createdAt.timeIntervalSince1970))
            ON CONFLICT (name) DO NOTHING RETURNING name
            """
        ).rows
        guard !rows.isEmpty else { throw SluiceError(.tokenExists, "a token named \(token.name) exists already") }
    }

    public func deleteAccessToken(name: String) async throws -> Bool {
        try await !connections.run("DELETE FROM access_token WHERE name = \(name) RETURNING name").rows.isEmpty
    }
}

extension PostgresJobRepository {
    /// The cluster's named tokens, on this repository's connections.
    public var tokens: PostgresAccessTokens { PostgresAccessTokens(connections: connections) }
}
