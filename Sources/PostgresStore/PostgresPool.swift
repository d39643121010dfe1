public import SluiceCore
public import Logging
public import ServiceLifecycle
public import SluiceTLS

/// A cluster store's pool of connections as a service (`PostgresClient.run()`): `sluice
/// serve` runs it before it opens the store (which reads it to start) and stops it after every
/// service that uses it has stopped (docs/job-service.md, "Services and shutdown"). Nothing
/// is asked of the store before it runs.
public final class PostgresPool: Service, Sendable, CustomStringConvertible {
    public var description: String { "PostgresPool" }
    let connections: PostgresConnections

    /// A pool for a node whose leases last `leaseDuration`: a session of it left inside a
    /// transaction for longer (a frozen node) is ended by the server.
    public init(
        location: PostgresLocation, leaseDuration: Duration, timeout: Duration = .seconds(10), trust: TLSTrust = .system,
        logger: Logger
    ) throws {
        connections = try PostgresConnections.make(
            location: location, timeout: timeout, idleInTransaction: leaseDuration, trust: trust, runsItself: false, logger: logger
        )
    }

    /// Until the task is cancelled or the group shuts down; its connections and event loop
    /// are closed when it returns.
    public func run() async {
        await cancelWhenGracefulShutdown { [connections] in await connections.run() }
    }
}
