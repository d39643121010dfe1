public import Foundation

/// A named token as the store keeps it: never the secret, only its SHA-256 digest (lowercase
/// hex), so a copy of the store lets no one in.
public struct AccessToken: Sendable, Hashable, Codable {
    public var name: String
    public var scope: TokenScope
    public var digest: String
    public var createdAt: Date

    public init(name: String, scope: TokenScope, digest: String, createdAt: Date) {
        self.name = name
        self.scope = scope
        self.digest = digest
        self.createdAt = createdAt
    }

    /// The token as `/tokens` and `sluice token --json` show it: never its digest.
    public var json: [(String, JSONValue)] {
        [("name", .string(name)), ("scope", .string(scope.rawValue)), ("createdAt", JSONValue(createdAt))]
    }

    /// A name is 1 to 64 of `A-Z a-z 0-9 . _ -`, so that it reads in a path (`/tokens/NAME`)
    /// and a table as it is; `.` and `..` are not, as a path segment they mean something else.
    public static func validate(name: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...64).contains(name.utf8.count), allowed, name != ".", name != ".." else {
            throw SluiceError(
                .invalidField, "a token's name is 1 to 64 letters, digits, '.', '_' or '-', other than . and ..", field: "name")
        }
    }
}

/// Where named tokens are kept: the job store, so every node of a cluster knows them.
public protocol TokenStore: Sendable {
    /// Every token, by name.
    func accessTokens() async throws -> [AccessToken]
    /// Adds a token; throws `tokenExists` when its name is taken.
    func insertAccessToken(_ token: AccessToken) async throws
    /// Removes the token of that name; false when there was none.
    func deleteAccessToken(name: String) async throws -> Bool
}
