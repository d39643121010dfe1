import Foundation
import JobService
import PostgresNIO
import SluiceCore

/// Jobs and webhook deliveries as rows of PostgreSQL's tables: the columns read, the JSON
/// and time columns written, and the values a row reads back as.
extension PostgresJobRepository {
    static let jobColumns = """
        id, url, state, filename, requested_filename, bytes_total, bytes_done, speed, eta, connections, resumable,
        expected_sha256, sha256, path, error_code, error_message, priority, headers, created_at, updated_at,
        completed_at, retry_at, dependencies, limit_rate, notify, proxy, insecure, directory, start_at, ignore_schedule,
        integrity, owner, epoch, last_owner
        """

    /// The same, as `job.column` (for a statement that joins another table with an `id`).
    static let qualifiedJobColumns = jobColumns.split(separator: ",")
        .map { "job." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")

    static let deliveryColumns = """
        id, job_id, event, url, body, state, attempts, last_status, last_error, created_at, next_attempt_at, delivered_at
        """

    /// The JSON and time columns of a job as stored.
    struct Columns {
        let headers: String
        let dependencies: String
        let completedAt: Double?
        let retryAt: Double?

        init(_ job: JobSnapshot) {
            headers = job.storedHeaders
            dependencies = job.storedDependencies
            completedAt = job.completedAt?.timeIntervalSince1970
            retryAt = job.retryAt?.timeIntervalSince1970
        }
    }

    static func snapshot(_ row: PostgresRow) throws -> JobSnapshot {
        try owned(row).job
    }

    /// A job row with its lease's owner, epoch and last owner.
    static func owned(_ row: PostgresRow) throws -> (job: JobSnapshot, owner: String?, epoch: Int64, lastOwner: String?) {
        let r = row.makeRandomAccess()
        var job = JobSnapshot(
            id: try r["id"].decode(String.self), url: try r["url"].decode(String.self),
            state: JobState(rawValue: try r["state"].decode(String.self)) ?? .failed,
            connections: try r["connections"].decode(Int.self), priority: try r["priority"].decode(Int.self),
            createdAt: Date(timeIntervalSince1970: try r["created_at"].decode(Double.self)),
            requestedFilename: try r["requested_filename"].decode(String?.self),
            expectedDigest: try r["expected_sha256"].decode(String?.self),
            headers: JobSnapshot.headers(stored: try r["headers"].decode(String.self))
        )
        job.filename = try r["filename"].decode(String?.self)
        job.bytesTotal = try r["bytes_total"].decode(Int64?.self)
        job.bytesDone = try r["bytes_done"].decode(Int64.self)
        job.speed = try r["speed"].decode(Double.self)
        job.eta = try r["eta"].decode(Double?.self)
        job.resumable = try r["resumable"].decode(Bool.self)
        job.sha256 = try r["sha256"].decode(String?.self)
        job.path = try r["path"].decode(String?.self)
        if let code = try r["error_code"].decode(String?.self) {
            job.error = .init(code: code, message: try r["error_message"].decode(String?.self) ?? "")
        }
        job.updatedAt = Date(timeIntervalSince1970: try r["updated_at"].decode(Double.self))
        job.completedAt = try r["completed_at"].decode(Double?.self).map(Date.init(timeIntervalSince1970:))
        job.retryAt = try r["retry_at"].decode(Double?.self).map(Date.init(timeIntervalSince1970:))
        job.after = JobSnapshot.dependencies(stored: try r["dependencies"].decode(String.self))
        job.limitRate = try r["limit_rate"].decode(Int64?.self)
        job.notify = try r["notify"].decode(String?.self)
        job.proxy = try r["proxy"].decode(String?.self)
        job.insecure = try r["insecure"].decode(Bool.self)
        job.directory = try r["directory"].decode(String?.self)
        job.startAt = try r["start_at"].decode(Double?.self).map(Date.init(timeIntervalSince1970:))
        job.ignoreSchedule = try r["ignore_schedule"].decode(Bool.self)
        if let integrity = try r["integrity"].decode(String?.self) { job.integrity = JobSnapshot.integrity(stored: integrity) }
        let owner = try r["owner"].decode(String?.self)
        job.node = job.state == .running ? owner : nil
        return (job, owner, try r["epoch"].decode(Int64.self), try r["last_owner"].decode(String?.self))
    }

    static func delivery(_ row: PostgresRow) -> WebhookDelivery? {
        let r = row.makeRandomAccess()
        guard let event = try? WebhookEvent(rawValue: r["event"].decode(String.self)),
            let state = try? WebhookDelivery.State(rawValue: r["state"].decode(String.self)),
            let id = try? r["id"].decode(String.self), let jobID = try? r["job_id"].decode(String.self),
            let url = try? r["url"].decode(String.self), let body = try? r["body"].decode(String.self),
            let createdAt = try? r["created_at"].decode(Double.self)
        else { return nil }
        var delivery = WebhookDelivery(
            id: id, jobID: jobID, event: event, url: url, body: body, createdAt: Date(timeIntervalSince1970: createdAt)
        )
        delivery.state = state
        delivery.attempts = (try? r["attempts"].decode(Int.self)) ?? 0
        delivery.lastStatus = try? r["last_status"].decode(Int?.self)
        delivery.lastError = try? r["last_error"].decode(String?.self)
        delivery.nextAttemptAt = (try? r["next_attempt_at"].decode(Double?.self))?.map(Date.init(timeIntervalSince1970:))
        delivery.deliveredAt = (try? r["delivered_at"].decode(Double?.self))?.map(Date.init(timeIntervalSince1970:))
        return delivery
    }
}
