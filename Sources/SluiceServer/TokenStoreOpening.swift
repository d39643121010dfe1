import SluiceTLS
import Foundation
import JobStore
public import Logging
import PostgresStore
public import SluiceCore

/// The store of a service's named tokens, opened by `sluice token` beside (or without) the
/// running service: the SQLite file of its data directory, or the cluster's PostgreSQL.
public struct OpenedTokenStore: Sendable {
    public let store: any TokenStore
    public let close: @Sendable () -> Void

    /// A data directory's store must exist: a mistyped `--data` must not make a new store
    /// the service never reads.
    public static func open(
        dataDirectory: String, store location: PostgresLocation?, caFile: String?, logger: Logger
    ) async throws -> OpenedTokenStore {
        if let location {
            let trust = try TLSTrust.make(caFile: caFile, environment: ProcessInfo.processInfo.environment)
            let tokens = try await PostgresAccessTokens.open(location: location, trust: trust, logger: logger)
            return OpenedTokenStore(store: tokens, close: { tokens.close() })
        }
        let path = dataDirectory + "/sluice.sqlite"
        guard FileManager.default.fileExists(atPath: path) else {
            throw SluiceError(
                .io, "no job store at \(path): give the service's --data (or SLUICE_DATA), or --store for a cluster"
            )
        }
        return OpenedTokenStore(store: try SQLiteJobRepository(path: path), close: {})
    }
}
