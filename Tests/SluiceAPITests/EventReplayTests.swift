import Foundation
@testable import JobService
import SluiceCore
import SluiceTestSupport
import Testing

/// docs/api.md, "Events": every event has an `id:`; a client that reconnects with
/// `Last-Event-ID` gets what it missed, or `reset` and a snapshot; the snapshot is bounded;
/// a subscriber that stops reading is held to a bounded queue. In process; the connection a
/// client that stops reading holds is `ConnectionLimitTests`'.
@Suite struct EventReplayTests {
    @Test func aReconnectWithTheLastIDGetsOnlyWhatItMissed() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            var ids: [String] = []
            for _ in 0..<3 {
                ids.append(try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String)
            }
            var first = EventReader(try await service.stream("/events"))
            for _ in 0..<3 { _ = try await first.next() }
            let seen = try #require(first.lastID)
            // Meanwhile: one job made, one deleted.
            let made = try await service.create(["url": service.testdata("/testdata/2K"), "paused": true])["id"] as! String
            _ = try await service.request(.delete, "/jobs/\(ids[0])")
            var again = EventReader(try await service.stream("/events", headers: ["Last-Event-ID": seen]))
            let created = try #require(try await again.next())
            #expect(created.event == "job" && created.data["id"] as? String == made, "\(created)")
            let removed = try #require(try await again.next())
            #expect(removed.event == "removed" && removed.data["id"] as? String == ids[0], "\(removed)")
            #expect(again.lastID != seen)
        }
    }

    @Test(arguments: ["garbage", "0-1", "zzzz-99999999"])
    func anIDTheServiceCannotContinueFromGetsResetThenTheSnapshot(lastEventID: String) async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let id = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String
            var reader = EventReader(try await service.stream("/events", headers: ["Last-Event-ID": lastEventID]))
            let reset = try #require(try await reader.next())
            #expect(reset.event == "reset")
            let snapshot = try #require(try await reader.next())
            #expect(snapshot.event == "job" && snapshot.data["id"] as? String == id)
        }
    }

    @Test func theSnapshotHoldsAtMostOnePageLiveJobsFirst() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let total = JobScheduler.snapshotLimit + 30
            for _ in 0..<total {
                _ = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])
            }
            var reader = EventReader(try await service.stream("/events"))
            var count = 0
            while count <= JobScheduler.snapshotLimit {
                let next = try await reader.next()
                guard next?.event == "job" else { break }
                count += 1
                if count == JobScheduler.snapshotLimit {
                    // Nothing more comes at once: a page, not every job.
                    break
                }
            }
            #expect(count == JobScheduler.snapshotLimit)
            let snapshotID = try #require(reader.lastID)
            // The next event, if any came, would be a change, with a newer id.
            let probe = try await service.create(["url": service.testdata("/testdata/1K"), "paused": true])["id"] as! String
            let change = try #require(try await reader.next())
            #expect(change.data["id"] as? String == probe, "the 1,001st event is the new job, not more of the snapshot")
            #expect(reader.lastID != snapshotID)
        }
    }

    @Test func aSubscriberThatStopsReadingIsHeldToItsLimitThenEnded() async {
        let broadcaster = JobEventBroadcaster()
        let (slow, _) = broadcaster.subscribe(after: nil)
        let (fast, _) = broadcaster.subscribe(after: nil)
        let job = JobSnapshot(
            id: "0000000000000", url: "https://example.com/" + String(repeating: "x", count: 400), state: .queued,
            connections: 1, priority: 0, createdAt: Date())
        var delivered = 0
        for round in 0..<4000 {
            broadcaster.publish(.job(job))
            // The fast one keeps up, handed at most `batchBytes` at a time (every 25 events:
            // one of these, with `sources`, is about 1.6 KB, and a batch holds 64 KiB).
            if round % 25 == 24, case .events(let events) = await fast.next() {
                #expect(events.dropLast().reduce(0) { $0 + $1.size } < JobEventSubscriber.batchBytes)
                delivered += events.count
            }
        }
        while delivered < 4000, case .events(let events) = await fast.next() { delivered += events.count }
        #expect(delivered == 4000)
        guard case .overflowed = await slow.next() else {
            Issue.record("the slow subscriber was not ended")
            return
        }
        // Its client comes back with an id the journal still holds: it gets the rest.
        let (_, missed) = broadcaster.subscribe(after: "\(broadcaster.run)-3990")
        #expect(missed?.count == 10)
        // An id older than the journal: start over.
        for _ in 0..<JobEventBroadcaster.journalCount { broadcaster.publish(.removed(id: "x")) }
        #expect(broadcaster.subscribe(after: "\(broadcaster.run)-1").missed == nil)
    }
}
