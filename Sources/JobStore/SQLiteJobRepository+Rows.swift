import Foundation
import GRDB
import JobService
import SluiceCore

/// A job as a row of SQLite's `job` table: the columns every insert and update writes, in
/// their order, and the snapshot a row of `jobColumns` reads back, by position.
extension SQLiteJobRepository {
    static func columns(_ job: JobSnapshot) -> StatementArguments {
        let headers = job.storedHeaders
        let dependencies = job.storedDependencies
        return [
            job.url, job.state.rawValue, job.filename, job.requestedFilename, job.bytesTotal, job.bytesDone,
            job.connections, job.resumable, job.expectedDigest, job.sha256, job.path, job.error?.code,
            job.error?.message, job.priority, headers, job.createdAt.timeIntervalSince1970,
            job.updatedAt.timeIntervalSince1970, job.completedAt?.timeIntervalSince1970, job.retryAt?.timeIntervalSince1970,
            dependencies, job.limitRate, job.notify, job.proxy, job.startAt?.timeIntervalSince1970, job.ignoreSchedule,
            job.storedIntegrity,
        ]
    }

    /// The columns `snapshot` reads, in its order.
    static let jobColumns = [
        "id", "url", "state", "connections", "priority", "createdAt", "requestedFilename", "expectedSHA256", "headers",
        "filename", "bytesTotal", "bytesDone", "resumable", "sha256", "path", "errorCode", "errorMessage", "updatedAt",
        "completedAt", "retryAt", "dependencies", "limitRate", "notify", "proxy", "insecure", "directory", "startAt",
        "ignoreSchedule", "integrity",
    ]

    /// A job from a row of `jobColumns`, read by position.
    static func snapshot(_ row: Row) -> JobSnapshot {
        var job = JobSnapshot(
            id: row[0], url: row[1], state: JobState(rawValue: row[2]) ?? .failed,
            connections: row[3], priority: row[4],
            createdAt: Date(timeIntervalSince1970: row[5]), requestedFilename: row[6],
            expectedDigest: row[7], headers: JobSnapshot.headers(stored: row[8])
        )
        job.filename = row[9]
        job.bytesTotal = row[10]
        job.bytesDone = row[11]
        job.resumable = row[12]
        job.sha256 = row[13]
        job.path = row[14]
        if let code: String = row[15] {
            job.error = .init(code: code, message: row[16] ?? "")
        }
        job.updatedAt = Date(timeIntervalSince1970: row[17])
        job.completedAt = (row[18] as Double?).map(Date.init(timeIntervalSince1970:))
        job.retryAt = (row[19] as Double?).map(Date.init(timeIntervalSince1970:))
        job.after = JobSnapshot.dependencies(stored: row[20])
        job.limitRate = row[21]
        job.notify = row[22]
        job.proxy = row[23]
        job.insecure = row[24] ?? false
        job.directory = row[25]
        job.startAt = (row[26] as Double?).map(Date.init(timeIntervalSince1970:))
        job.ignoreSchedule = row[27] ?? false
        if let integrity: String = row[28] { job.integrity = JobSnapshot.integrity(stored: integrity) }
        return job
    }
}
