import Foundation
import GRDB
public import SluiceCore

/// Named tokens in the same SQLite file as the jobs, so `sluice token create --data DIR`
/// and the running service see the same ones.
extension SQLiteJobRepository: TokenStore {
    public func accessTokens() async throws -> [AccessToken] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT name, scope, digest, createdAt FROM accessToken ORDER BY name").compactMap { row in
                guard let scope = TokenScope(rawValue: row["scope"]) else { return nil }
                return AccessToken(
                    name: row["name"], scope: scope, digest: row["digest"],
                    createdAt: Date(timeIntervalSince1970: row["createdAt"])
                )
            }
        }
    }

    public func insertAccessToken(_ token: AccessToken) async throws {
        let inserted = try await write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO accessToken (name, scope, digest, createdAt) VALUES (?, ?, ?, ?)",
                arguments: [token.name, token.scope.rawValue, token.digest, token.createdAt.timeIntervalSince1970]
            )
            return db.changesCount > 0
        }
        guard inserted else { throw SluiceError(.tokenExists, "a token named \(token.name) exists already") }
    }

    public func deleteAccessToken(name: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM accessToken WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
    }
}
