import Foundation
import SluiceTestSupport
import Testing

/// Issue 20, point 5: a pause answers once the run has stopped and its checkpoint is
/// stored, so the `bytesDone` it returns is final and an edit right after it sees those bytes.
@Suite struct PauseFinalityTests {
    @Test func aNewLinkRightAfterAPauseKeepsTheBytesOrIsRefused() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            // Several rounds: the race lost about one time in two before the fix.
            for round in 0..<4 {
                let seed = 40 + round
                let id =
                    try await service.create(["url": service.testdata("/testdata/32M?seed=\(seed)&rate=4M"), "connections": 2])["id"]
                    as! String
                try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) >= 2 << 20 }
                // The pause and the edit go out together, on two connections: the edit must not
                // run before the pause's checkpoint is stored.
                async let paused = service.send(.post, "/jobs/\(id)/pause", [String: Any]())
                async let edited = service.send(
                    .patch, "/jobs/\(id)", ["url": service.testdata("/testdata/32M?seed=\(seed + 100)"), "keepBytes": true]
                )
                let (pause, edit) = try await (paused, edited)
                #expect(pause.status == 200)
                #expect(edit.status == 409, "round \(round): \(String(decoding: edit.body, as: UTF8.self))")
                #expect(edit.errorCode == "remote_changed")
                let job = try await service.job(id)
                #expect(job["url"] as? String == service.testdata("/testdata/32M?seed=\(seed)&rate=4M"), "round \(round)")
                #expect(job["state"] as? String == "paused")
                #expect((job["bytesDone"] as? Int ?? 0) >= 2 << 20, "round \(round): the bytes on disk stay")
                _ = try await service.request(.DELETE, "/jobs/\(id)")
            }
        }
    }

    @Test func thePausesAnswerIsFinal() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            let id = try await service.create(["url": service.testdata("/testdata/32M?seed=3&rate=8M"), "connections": 4])["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) >= 1 << 20 }
            let pause = try await service.send(.post, "/jobs/\(id)/pause", [String: Any]())
            let answered = try pause.json()["bytesDone"] as? Int
            // Whatever the run had in flight when it stopped is in that figure already: it is the
            // stored checkpoint's (what a resume goes on from), and the job shows it.
            let segments = try #require(
                try JSONSerialization.jsonObject(with: await service.request(.GET, "/jobs/\(id)/segments").body) as? [[String: Any]])
            let stored = segments.reduce(0) { $0 + ($1["done"] as? Int ?? 0) }
            #expect(stored == answered, "the checkpoint holds \(stored), the pause answered \(answered ?? -1)")
            #expect(try await service.job(id)["bytesDone"] as? Int == answered)
            // And a resume goes on from exactly there.
            _ = try await service.send(.post, "/jobs/\(id)/resume", [String: Any]())
            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 32 << 20, seed: 3))
        }
    }
}
