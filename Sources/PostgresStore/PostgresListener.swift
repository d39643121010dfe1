import Foundation
import JobService
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// `LISTEN` on a connection of its own: each notification is a job id (or empty, for the
/// queue's settings). When the connection drops it is made again, with a growing pause
/// up to two seconds, and a `.resync` is sent: notifications may have been missed.
final class PostgresListener: Sendable {
    let connections: PostgresConnections
    let channel: String
    let logger: Logger
    private let state = NIOLockedValueBox<(task: Task<Void, Never>?, continuations: [AsyncStream<ClusterSignal>.Continuation])>((nil, []))

    init(connections: PostgresConnections, channel: String, logger: Logger) {
        self.connections = connections
        self.channel = channel
        self.logger = logger
        connections.onClose { [weak self] in await self?.stopAndWait() }
    }

    func signals() -> AsyncStream<ClusterSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClusterSignal.self, bufferingPolicy: .bufferingNewest(1024))
        state.withLockedValue { state in
            state.continuations.append(continuation)
            if state.task == nil { state.task = Task { await self.listen() } }
        }
        return stream
    }

    func stop() {
        _ = stopping()
    }

    /// Stops listening and returns once the listening task has ended.
    func stopAndWait() async {
        await stopping()?.value
    }

    private func stopping() -> Task<Void, Never>? {
        let (task, continuations) = state.withLockedValue { state in
            defer { state = (nil, []) }
            return state
        }
        task?.cancel()
        for continuation in continuations { continuation.finish() }
        return task
    }

    private func send(_ signal: ClusterSignal) {
        for continuation in state.withLockedValue({ $0.continuations }) { continuation.yield(signal) }
    }

    private func listen() async {
        var pause = Duration.milliseconds(100)
        var first = true
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    on: connections.group.next(), configuration: connections.configuration, id: connections.connectionID(),
                    logger: logger
                ).get()
                let context = connection.addListener(channel: channel) { [weak self] _, notification in
                    self?.send(notification.payload.isEmpty ? .resync : .job(notification.payload))
                }
                // LISTEN is in force once a query after it has answered; one that does not
                // answer in time closes the connection, which fails the query (no thread waits).
                let deadline = connection.eventLoop.scheduleTask(in: connections.timeout) { PostgresConnections.discard(connection) }
                do {
                    let answer: EventLoopFuture<PostgresQueryResult> = connection.query("SELECT 1", logger: logger)
                    _ = try await answer.get()
                    deadline.cancel()
                } catch {
                    deadline.cancel()
                    context.stop()
                    PostgresConnections.discard(connection)
                    throw error
                }
                if !first { logger.notice("listening to PostgreSQL again") }
                send(.resync)
                first = false
                pause = .milliseconds(100)
                await withTaskCancellationHandler {
                    try? await connection.closeFuture.get()
                } onCancel: {
                    context.stop()
                    let _: EventLoopFuture<Void> = connection.close()
                }
                if Task.isCancelled { return }
                logger.warning("the PostgreSQL listening connection closed; connecting again")
            } catch {
                if Task.isCancelled { return }
                logger.warning("cannot listen to PostgreSQL: \(String(reflecting: error))")
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
        }
    }
}
