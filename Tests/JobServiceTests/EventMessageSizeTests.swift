import Foundation
@testable import JobService
import SluiceCore
import Testing

/// An event's size is known before its JSON is made (the journal and each stream's queue are
/// bounded by it, and an event no stream sends is never encoded): it must not fall short of
/// what the JSON then holds, nor overshoot it by much.
@Suite struct EventMessageSizeTests {
    static func job(url: String = "http://127.0.0.1:9/f.bin") -> JobSnapshot {
        var job = JobSnapshot(
            id: "0000000000001", url: url, state: .failed, connections: 4, priority: 3, createdAt: Date(),
            requestedFilename: "f.bin", expectedDigest: String(repeating: "a", count: 64), headers: ["Cookie": "a=b"])
        job.filename = "f.bin"
        job.path = "sub/f.bin"
        job.bytesTotal = 1 << 40
        job.bytesDone = 1 << 39
        job.speed = 123_456_789
        job.eta = 86_400
        job.updatedAt = Date()
        job.completedAt = Date()
        job.retryAt = Date()
        job.after = ["0000000000002", "0000000000003"]
        job.waitingFor = ["0000000000003"]
        job.limitRate = 1 << 30
        job.notify = "http://127.0.0.1:9/hook"
        job.proxy = "http://127.0.0.1:3128"
        job.node = "node-a"
        job.error = .init(code: "checksum_mismatch", message: "the file's SHA-256 is not the one asked for")
        return job
    }

    @Test(arguments: [
        JobEvent.job(job()), .job(job(url: "https://example.com/" + String(repeating: "x", count: 8000))),
        .job(JobSnapshot(id: "0000000000004", url: "http://h/a", state: .queued, connections: 1, priority: 0, createdAt: Date())),
        .removed(id: "0000000000005"),
    ])
    func theSizeCoversTheJSONWithoutOvershootingMuch(event: JobEvent) {
        let message = JobEventMessage(event, id: "abc-123")
        let sent = message.data.utf8.count + message.name.utf8.count + message.id.utf8.count
        #expect(message.size >= sent, "\(message.size) for \(sent) bytes")
        #expect(message.size <= sent + 700, "\(message.size) for \(sent) bytes")
    }
}
