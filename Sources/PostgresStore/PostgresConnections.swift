import Dispatch
import Foundation
import JobService
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO
import SluiceCore

/// PostgreSQL through PostgresNIO's `PostgresClient` (its pool of connections, which
/// connects, replaces broken connections and keeps idle ones alive), used synchronously, as
/// the job repository's callers expect (the scheduler's calls are synchronous; see
/// `JobRepository`).
///
/// The client runs on an event loop of its own, in a task of its own for as long as the
/// store is open (`PostgresClient.run()`). A call leases a connection from it and waits for
/// the lease on its own thread (a store thread or the scheduler's, never the cooperative
/// pool), bounded by the call's deadline; the lease's task holds the connection without a
/// thread. Every wait has a deadline, so a database that stops answering (a partition) fails
/// calls in `timeout` instead of hanging the node.
final class PostgresConnections: Sendable {
    let location: PostgresLocation
    let tls: PostgresConnection.Configuration.TLS
    let group: MultiThreadedEventLoopGroup
    let logger: Logger
    let timeout: TimeAmount
    let client: PostgresClient
    private let running: NIOLockedValueBox<Task<Void, Never>?> = NIOLockedValueBox(nil)
    private let nextID = NIOLockedValueBox(0)
    private let closed = NIOLockedValueBox(false)
    /// Connections closed for a timeout: no `ROLLBACK` is sent on them.
    private let discarded = NIOLockedValueBox<Set<ObjectIdentifier>>([])

    init(
        location: PostgresLocation, tls: PostgresConnection.Configuration.TLS, clientTLS: PostgresClient.Configuration.TLS,
        size: Int = 4, timeout: TimeAmount = .seconds(10), logger: Logger
    ) {
        self.location = location
        self.tls = tls
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.logger = logger
        self.timeout = timeout
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: clientTLS
        )
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = size
        client = PostgresClient(configuration: configuration, eventLoopGroup: group, backgroundLogger: logger)
        // The pool serves leases once `run()` has begun: the task is started and seen running
        // before the first call.
        let started = DispatchSemaphore(value: 0)
        let client = self.client
        running.withLockedValue {
            $0 = Task.detached(executorPreference: StoreExecutor.shared) {
                started.signal()
                await client.run()
            }
        }
        started.wait()
    }

    /// The configuration of a connection of its own (the listener's, which the pool cannot
    /// lend for as long as it listens).
    var configuration: PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: tls
        )
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    func connectionID() -> Int {
        nextID.withLockedValue {
            $0 += 1
            return $0
        }
    }

    /// Connects once outside the pool and closes the connection: the pool retries a
    /// connection that fails (a refused certificate, a wrong password) until a call's
    /// deadline, so the store's start asks this first, to fail at once with the reason.
    func checkReachable() throws {
        let deadline = callDeadline
        let future = PostgresConnection.connect(on: group.next(), configuration: configuration, id: connectionID(), logger: logger)
        do {
            Self.discard(try wait(future, what: "connect", until: deadline))
        } catch let timedOut as TimedOut {
            future.whenSuccess { Self.discard($0) }
            throw Self.unavailable(timedOut.message)
        }
    }

    /// The deadline of a call starting now: the caller's budget (`StoreCallBudget`) or
    /// `timeout`, for the whole call — waiting for a connection, connecting, every statement.
    private var callDeadline: DispatchTime {
        let budget = StoreCallBudget.remaining.map { TimeAmount.nanoseconds(Int64($0 / .nanoseconds(1))) } ?? timeout
        return .now() + .nanoseconds(Int(min(budget, timeout).nanoseconds))
    }

    /// The deadline of the call each connection is serving (its statements share it).
    private let deadlines = NIOLockedValueBox<[ObjectIdentifier: DispatchTime]>([:])

    /// Runs `body` on one connection leased for the whole call (a transaction's statements
    /// must not interleave with another caller's).
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        guard !closed.withLockedValue({ $0 }) else { throw Self.unavailable("the store is closed") }
        // A request whose budget is spent (it waited behind another's call) asks nothing.
        if let remaining = StoreCallBudget.remaining, remaining < .milliseconds(1) {
            throw Self.unavailable("PostgreSQL did not answer in time")
        }
        let deadline = callDeadline
        let handoff = ConnectionHandoff()
        let client = self.client
        let lease = Task.detached(executorPreference: StoreExecutor.shared) {
            do {
                try await client.withConnection { connection in
                    guard handoff.offer(connection) else { return }
                    await handoff.returned()
                }
            } catch {
                handoff.fail(error)
            }
        }
        let connection: PostgresConnection
        switch handoff.take(until: deadline) {
        case .connection(let leased):
            connection = leased
        case .failed(let error):
            throw Self.storeError(error)
        case .timedOut:
            // A lease still waiting for a connection is withdrawn; one that comes later
            // goes back at once.
            lease.cancel()
            throw Self.unavailable("no connection to PostgreSQL could be had in time")
        }
        let key = ObjectIdentifier(connection)
        deadlines.withLockedValue { $0[key] = deadline }
        defer {
            deadlines.withLockedValue { $0[key] = nil }
            // One closed for a timeout goes back once closed, so that the pool never lends it
            // to the next call meanwhile.
            if discarded.withLockedValue({ $0.remove(key) != nil }) {
                connection.closeFuture.whenComplete { _ in handoff.giveBack() }
            } else {
                handoff.giveBack()
            }
        }
        return try body(connection)
    }

    /// Closes a connection, keeping it alive until it has closed (PostgresNIO requires it).
    /// A pool's connection closed this way is replaced by the pool.
    static func discard(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// One statement on `connection`, its rows collected.
    func run(_ query: PostgresQuery, on connection: PostgresConnection) throws -> PostgresQueryResult {
        let future = connection.query(query, logger: logger)
        let deadline = deadlines.withLockedValue { $0[ObjectIdentifier(connection)] } ?? callDeadline
        do {
            return try wait(future, what: "query", until: deadline)
        } catch let timedOut as TimedOut {
            // The connection's state is unknown now: it is not used again.
            discarded.withLockedValue { _ = $0.insert(ObjectIdentifier(connection)) }
            Self.discard(connection)
            throw Self.unavailable(timedOut.message)
        }
    }

    /// One statement on any connection.
    func run(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try withConnection { try run(query, on: $0) }
    }

    /// Statements in one transaction, rolled back when `body` throws.
    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { connection in
            _ = try run("BEGIN", on: connection)
            do {
                let result = try body(connection)
                _ = try run("COMMIT", on: connection)
                return result
            } catch {
                let usable = !connection.isClosed && !discarded.withLockedValue { $0.contains(ObjectIdentifier(connection)) }
                if usable { _ = try? run("ROLLBACK", on: connection) }
                throw error
            }
        }
    }

    struct TimedOut: Error { let message: String }

    /// Waits for `future` on this thread, for at most `timeout`.
    func wait<T: Sendable>(_ future: EventLoopFuture<T>, what: String, until deadline: DispatchTime? = nil) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
        future.whenComplete { outcome in
            result.withLockedValue { $0 = outcome }
            done.signal()
        }
        guard done.wait(timeout: deadline ?? callDeadline) == .success else {
            throw TimedOut(message: "PostgreSQL did not answer a \(what) in time")
        }
        do {
            return try result.withLockedValue { $0! }.get()
        } catch {
            throw Self.storeError(error)
        }
    }

    func close() {
        closed.withLockedValue { $0 = true }
        // The pool closes its connections once its task is cancelled; the event loop goes
        // after any connection still in use has been given back and closed.
        running.withLockedValue { $0?.cancel() }
        let group = self.group
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { group.shutdownGracefully { _ in } }
    }

    /// A store error as the API answers it (503 `store_unavailable`), with PostgreSQL's own
    /// words in the log only.
    static func storeError(_ error: any Error) -> SluiceError {
        if let error = error as? SluiceError { return error }
        if let error = error as? PSQLError, let code = error.serverInfo?[.sqlState] {
            return SluiceError(.storeUnavailable, "the job store cannot be used: PostgreSQL error \(code)", cause: error)
        }
        return SluiceError(.storeUnavailable, "the job store cannot be used: PostgreSQL cannot be reached", cause: error)
    }

    static func unavailable(_ message: String) -> SluiceError {
        SluiceError(.storeUnavailable, "the job store cannot be used: \(message)")
    }
}
