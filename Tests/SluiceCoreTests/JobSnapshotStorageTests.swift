import Foundation
import SluiceCore
import Testing

/// Issue 20, "memory holds what is alive, in little space": a job keeps the fields most
/// jobs leave unset in one shared box until it sets one, and stays a value.
@Suite struct JobSnapshotStorageTests {
    static func job() -> JobSnapshot {
        JobSnapshot(
            id: "a", url: "https://example.com/a.iso", state: .paused, connections: 4, priority: 0,
            createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test func aJobIsSmallInline() {
        // id, url, state, filename, sizes, speed, eta, connections, priority, dates, flags and
        // the box: what the queue reads, a few hundred bytes less than every field inline.
        #expect(MemoryLayout<JobSnapshot>.size <= 200, "\(MemoryLayout<JobSnapshot>.size) bytes")
    }

    @Test func changingACopysExtraFieldsLeavesTheOriginal() {
        let original = Self.job()
        var copy = original
        copy.notify = "https://hooks.example.com/a"
        copy.after = ["b"]
        copy.headers = ["Cookie": "x=y"]
        #expect(original.notify == nil && original.after.isEmpty && original.headers.isEmpty)
        #expect(copy.notify == "https://hooks.example.com/a" && copy.after == ["b"] && copy.headers == ["Cookie": "x=y"])
        #expect(copy != original)
        var again = copy
        again.after.append("c")
        #expect(copy.after == ["b"])
        #expect(again.after == ["b", "c"])
        // Equal by value, whichever box holds the fields.
        copy.notify = nil
        copy.after = []
        copy.headers = [:]
        #expect(copy == original)
    }

    @Test func everyExtraFieldRoundTripsThroughItsSetter() {
        var job = Self.job()
        job.sha256 = "ab"
        job.path = "a.iso"
        job.error = .init(code: "network", message: "m")
        job.completedAt = Date(timeIntervalSince1970: 5)
        job.waitingFor = ["w"]
        job.limitRate = 7
        job.proxy = "http://proxy:3128"
        job.node = "n1"
        job.requestedFilename = "r.iso"
        job.expectedDigest = "cd"
        #expect(job.sha256 == "ab" && job.path == "a.iso" && job.error?.code == "network")
        #expect(job.completedAt == Date(timeIntervalSince1970: 5) && job.waitingFor == ["w"] && job.limitRate == 7)
        #expect(job.proxy == "http://proxy:3128" && job.node == "n1" && job.requestedFilename == "r.iso" && job.expectedDigest == "cd")
        #expect(Self.job() != job)
    }
}
