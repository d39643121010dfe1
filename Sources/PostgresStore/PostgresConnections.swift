import Dispatch
import Foundation
import JobService
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO
import SluiceCore

/// A few connections to PostgreSQL used synchronously, as the job repository's callers
/// expect (the scheduler's calls are synchronous; see `JobRepository`).
///
/// The connections run on an event loop of their own, so a caller blocked here (on the
/// cooperative pool, a data-plane loop, or NIO's thread pool) never blocks the loop that
/// must answer it. A dead connection is dropped and made again at the next call; every wait
/// has a deadline, so a database that stops answering (a partition) fails calls in
/// `timeout` instead of hanging the node.
final class PostgresConnections: Sendable {
    let location: PostgresLocation
    let tls: PostgresConnection.Configuration.TLS
    let group: MultiThreadedEventLoopGroup
    let logger: Logger
    let timeout: TimeAmount
    private let idle = NIOLockedValueBox<[PostgresConnection]>([])
    private let slots: DispatchSemaphore
    private let nextID = NIOLockedValueBox(0)
    private let closed = NIOLockedValueBox(false)
    /// Connections closed for a timeout: never given back to the idle list.
    private let discarded = NIOLockedValueBox<Set<ObjectIdentifier>>([])

    init(
        location: PostgresLocation, tls: PostgresConnection.Configuration.TLS, size: Int = 4, timeout: TimeAmount = .seconds(10),
        logger: Logger
    ) {
        self.location = location
        self.tls = tls
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.logger = logger
        self.timeout = timeout
        self.slots = DispatchSemaphore(value: size)
    }

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

    /// The deadline of a call starting now: the caller's budget (`StoreCallBudget`) or
    /// `timeout`, for the whole call — waiting for a connection, connecting, every statement.
    private var callDeadline: DispatchTime {
        let budget = StoreCallBudget.remaining.map { TimeAmount.nanoseconds(Int64($0 / .nanoseconds(1))) } ?? timeout
        return .now() + .nanoseconds(Int(min(budget, timeout).nanoseconds))
    }

    /// The deadline of the call each connection is serving (its statements share it).
    private let deadlines = NIOLockedValueBox<[ObjectIdentifier: DispatchTime]>([:])

    /// Runs `body` on one connection held for the whole call (a transaction's statements
    /// must not interleave with another caller's).
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        guard !closed.withLockedValue({ $0 }) else { throw Self.unavailable("the store is closed") }
        // A request whose budget is spent (it waited behind another's call) asks nothing.
        if let remaining = StoreCallBudget.remaining, remaining < .milliseconds(1) {
            throw Self.unavailable("PostgreSQL did not answer in time")
        }
        let deadline = callDeadline
        guard slots.wait(timeout: deadline) == .success else {
            throw Self.unavailable("every connection to PostgreSQL is busy")
        }
        defer { slots.signal() }
        let connection = try idle.withLockedValue { $0.popLast() }.flatMap { $0.isClosed ? nil : $0 } ?? connect(by: deadline)
        let key = ObjectIdentifier(connection)
        deadlines.withLockedValue { $0[key] = deadline }
        defer {
            deadlines.withLockedValue { $0[key] = nil }
            giveBack(connection)
        }
        return try body(connection)
    }

    /// Back to the idle list, or closed when it is broken or the store is closing.
    private func giveBack(_ connection: PostgresConnection) {
        let wasDiscarded = discarded.withLockedValue { $0.remove(ObjectIdentifier(connection)) != nil }
        if wasDiscarded { return }
        if connection.isClosed || closed.withLockedValue({ $0 }) {
            Self.discard(connection)
        } else {
            idle.withLockedValue { $0.append(connection) }
        }
    }

    /// Closes a connection, keeping it alive until it has closed (PostgresNIO requires it).
    static func discard(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    private func connect(by deadline: DispatchTime) throws -> PostgresConnection {
        let future = PostgresConnection.connect(
            on: group.next(), configuration: configuration, id: connectionID(), logger: logger
        )
        do {
            return try wait(future, what: "connect", until: deadline)
        } catch let timedOut as TimedOut {
            // A connection made after the deadline is closed, not leaked.
            future.whenSuccess { Self.discard($0) }
            throw Self.unavailable(timedOut.message)
        }
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
        for connection in idle.withLockedValue({ list in
            defer { list = [] }
            return list
        }) {
            let closing: EventLoopFuture<Void> = connection.close()
            _ = try? wait(closing, what: "close")
        }
        // After any connection still in use has been given back and closed.
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
