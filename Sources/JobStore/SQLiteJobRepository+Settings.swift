import GRDB
import JobService
public import SluiceCore

/// The store's single rows: the queue's settings, the schedule and the quotas (one each, for
/// the whole service).
extension SQLiteJobRepository {
    public func queueSettings() async throws -> QueueSettings? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT paused, maxActive, limitRate FROM queueSettings WHERE id = 1").map {
                QueueSettings(paused: $0["paused"], maxActive: $0["maxActive"], limitRate: $0["limitRate"])
            }
        }
    }

    public func saveQueueSettings(_ settings: QueueSettings) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO queueSettings (id, paused, maxActive, limitRate) VALUES (1, ?, ?, ?)",
                arguments: [settings.paused, settings.maxActive, settings.limitRate]
            )
        }
    }

    public func scheduleText() async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT body FROM schedule WHERE id = 1") }
    }

    public func saveScheduleText(_ text: String) async throws {
        try await write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO schedule (id, body) VALUES (1, ?)", arguments: [text])
        }
    }

    public func quotaText() async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT body FROM quota WHERE id = 1") }
    }

    public func updateQuotaText(_ update: @escaping @Sendable (String?) -> String) async throws -> String {
        try await write { db in
            let text = update(try String.fetchOne(db, sql: "SELECT body FROM quota WHERE id = 1"))
            try db.execute(sql: "INSERT OR REPLACE INTO quota (id, body) VALUES (1, ?)", arguments: [text])
            return text
        }
    }
}
