import Dispatch
import Foundation
import JobService
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO
import SluiceCore
import SluiceTLS

/// PostgreSQL through PostgresNIO's `PostgresClient` (its pool of connections, which
/// connects, replaces broken connections and keeps idle ones alive), awaited: a call holds
/// no thread while it waits.
///
/// The client runs on an event loop of its own (`PostgresClient.run()`, `run()` here): in
/// `sluice serve` as a service its owner runs beside everything that uses the store and stops
/// last (`PostgresPool`); opened by itself (a short command, a test), in a task of its own
/// until `close()`. A call leases a connection from it, bounded by the call's deadline, and
/// every statement waits until that deadline at most, so a database that stops answering (a
/// partition) fails calls in `timeout` instead of hanging the node.
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
        size: Int = 4, timeout: TimeAmount = .seconds(10), idleInTransaction: Duration? = nil, runsItself: Bool = true,
        logger: Logger
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
        if let idleInTransaction {
            // A node frozen inside a transaction (SIGSTOP, a stalled host) holds its row and
            // advisory locks for as long as its connection stays open, which would keep every
            // other node's rescue waiting behind them: the server ends such a session instead.
            let milliseconds = max(1, Int(idleInTransaction / .milliseconds(1)))
            configuration.options.additionalStartupParameters = [("idle_in_transaction_session_timeout", "\(milliseconds)")]
        }
        client = PostgresClient(configuration: configuration, eventLoopGroup: group, backgroundLogger: logger)
        self.runsItself = runsItself
        // The pool serves leases once `run()` has begun: a lease asked before waits for it.
        guard runsItself else { return }
        running.withLockedValue {
            // Detached: not stopped by the graceful shutdown of a group it was opened in.
            $0 = Task.detached(executorPreference: StoreExecutor.shared) { await self.runClient() }
        }
    }

    /// Connections to `location` with its TLS as `trust` says.
    static func make(
        location: PostgresLocation, size: Int = 4, timeout: Duration, idleInTransaction: Duration?, trust: TLSTrust, runsItself: Bool,
        logger: Logger
    ) throws -> PostgresConnections {
        PostgresConnections(
            location: location, tls: try PostgresTLS.configuration(for: location, trust: trust),
            clientTLS: try PostgresTLS.clientConfiguration(for: location, trust: trust), size: size,
            timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))), idleInTransaction: idleInTransaction, runsItself: runsItself,
            logger: logger
        )
    }

    /// Whether the pool runs in a task of its own (until `close()`), or in its owner's
    /// (`run()`).
    let runsItself: Bool

    /// Runs the pool until the task is cancelled, then closes its connections and its event
    /// loop: for an owner that runs it (`PostgresPool`).
    func run() async {
        await runClient()
        closed.withLockedValue { $0 = true }
        // What else uses the event loop (the listener's connection) ends first: a connection
        // made on a loop that has shut down would never answer.
        for action in closing.withLockedValue({ $0 }) { await action() }
        try? await group.shutdownGracefully()
    }

    /// Run when the pool's owner ends its run, before the event loop shuts down.
    func onClose(_ action: @escaping @Sendable () async -> Void) { closing.withLockedValue { $0.append(action) } }
    private let closing = NIOLockedValueBox<[@Sendable () async -> Void]>([])

    private func runClient() async {
        started.open()
        await client.run()
    }

    /// Opens once the pool's `run()` has begun.
    private let started = Gate()

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
    func checkReachable() async throws {
        let deadline = callDeadline
        let future: EventLoopFuture<PostgresConnection> = PostgresConnection.connect(
            on: group.next(), configuration: configuration, id: connectionID(), logger: logger
        )
        do {
            Self.discard(try await wait(future, what: "connect", until: deadline))
        } catch let timedOut as TimedOut {
            future.whenSuccess { Self.discard($0) }
            throw Self.unavailable(timedOut.message)
        }
    }

    /// The deadline of a call starting now: the caller's budget (`StoreCallBudget`) or
    /// `timeout`, for the whole call — waiting for a connection, connecting, every statement.
    private var callDeadline: NIODeadline {
        let budget = StoreCallBudget.remaining.map { TimeAmount.nanoseconds(Int64($0 / .nanoseconds(1))) } ?? timeout
        return .now() + min(budget, timeout)
    }

    /// The deadline of the call each connection is serving (its statements share it).
    private let deadlines = NIOLockedValueBox<[ObjectIdentifier: NIODeadline]>([:])

    /// Runs `body` on one connection leased for the whole call (a transaction's statements
    /// must not interleave with another caller's). The wait for a connection ends at the
    /// call's deadline; each statement has the rest of it (`run(_:on:)`).
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard !closed.withLockedValue({ $0 }) else { throw Self.unavailable("the store is closed") }
        // A request whose budget is spent (it waited behind another's call) asks nothing.
        if let remaining = StoreCallBudget.remaining, remaining < .milliseconds(1) {
            throw Self.unavailable("PostgreSQL did not answer in time")
        }
        let deadline = callDeadline
        let client = self.client
        let race = LeaseRace<T>()
        return try await withCheckedThrowingContinuation { continuation in
            race.waiting(continuation)
            // The budget goes with the task (a task-local value), so statements see it too.
            let lease = Task(executorPreference: StoreExecutor.shared) {
                do {
                    await self.started.passed()
                    let result = try await client.withConnection { connection in
                        // Given up before the connection came: it goes back unused.
                        guard race.leased() else { throw CancellationError() }
                        let key = ObjectIdentifier(connection)
                        self.deadlines.withLockedValue { $0[key] = deadline }
                        defer { self.deadlines.withLockedValue { $0[key] = nil } }
                        // Closed for a timeout: given back once closed (whether the body threw
                        // or not), so that the pool never lends it to the next call meanwhile.
                        let result: Result<T, any Error>
                        do { result = .success(try await body(connection)) } catch { result = .failure(error) }
                        if self.discarded.withLockedValue({ $0.remove(key) != nil }) { try? await connection.closeFuture.get() }
                        return try result.get()
                    }
                    race.finish(.success(result))
                } catch {
                    race.finish(.failure(Self.storeError(error)))
                }
            }
            // No connection by the deadline: the call fails, and a lease still waiting is
            // withdrawn.
            group.next().scheduleTask(deadline: deadline) {
                if race.timedOut(Self.unavailable("no connection to PostgreSQL could be had in time"), whileWaiting: true) {
                    lease.cancel()
                }
            }
        }
    }

    /// Closes a connection, keeping it alive until it has closed (PostgresNIO requires it).
    /// A pool's connection closed this way is replaced by the pool.
    static func discard(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// One statement on `connection`, its rows collected.
    func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> PostgresQueryResult {
        let future: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
        let deadline = deadlines.withLockedValue { $0[ObjectIdentifier(connection)] } ?? callDeadline
        do {
            return try await wait(future, what: "query", until: deadline)
        } catch let timedOut as TimedOut {
            // The connection's state is unknown now: it is not used again.
            discarded.withLockedValue { _ = $0.insert(ObjectIdentifier(connection)) }
            Self.discard(connection)
            throw Self.unavailable(timedOut.message)
        }
    }

    /// One statement on any connection.
    func run(_ query: PostgresQuery) async throws -> PostgresQueryResult {
        try await withConnection { try await self.run(query, on: $0) }
    }

    /// Statements in one transaction, rolled back when `body` throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withConnection { connection in
            _ = try await self.run("BEGIN", on: connection)
            do {
                let result = try await body(connection)
                _ = try await self.run("COMMIT", on: connection)
                return result
            } catch {
                let usable = !connection.isClosed && !self.discarded.withLockedValue { $0.contains(ObjectIdentifier(connection)) }
                if usable { _ = try? await self.run("ROLLBACK", on: connection) }
                throw error
            }
        }
    }

    struct TimedOut: Error { let message: String }

    /// Waits for `future`, holding no thread, until `deadline` at most.
    func wait<T: Sendable>(_ future: EventLoopFuture<T>, what: String, until deadline: NIODeadline? = nil) async throws -> T {
        let race = LeaseRace<T>()
        let timer = future.eventLoop.scheduleTask(deadline: deadline ?? callDeadline) {
            _ = race.timedOut(TimedOut(message: "PostgreSQL did not answer a \(what) in time"))
        }
        do {
            return try await withCheckedThrowingContinuation { continuation in
                race.waiting(continuation)
                _ = race.leased()
                future.whenComplete { outcome in
                    timer.cancel()
                    race.finish(outcome.mapError { $0 })
                }
            }
        } catch let timedOut as TimedOut {
            throw timedOut
        } catch {
            throw Self.storeError(error)
        }
    }

    func close() {
        closed.withLockedValue { $0 = true }
        // Run by its owner: it stops when the owner's task ends (`run()`).
        guard runsItself else { return }
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
