import Foundation
import SluiceTestSupport
import Testing
import NIOHTTP1

/// Issue 10: a pause or a delete that arrives while the file is synced, hashed and placed
/// has one consistent outcome, whoever wins.
@Suite(.serialized) struct CompletionRaceTests {
    /// Four connections: the prefix hasher follows only the first segment, so the final
    /// hash covers most of the file, a window of a good fraction of a second.
    static let size: Int64 = 32 << 20
    static let attempts = 8

    /// How long after the last byte each attempt acts: from the sync through the hash to
    /// the placement.
    static func delay(_ attempt: Int) -> Duration { .milliseconds(attempt * attempt * 4) }

    static func documents(_ service: ServiceHarness, prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// Starts a job and returns once all its bytes are on disk (the job says so while it
    /// verifies), or nil if it completed before that could be seen.
    static func startAndWaitForTheLastByte(_ service: ServiceHarness, name: String, seed: Int) async throws -> (id: String, inWindow: Bool)
    {
        let url = service.testdata("/testdata/32M?seed=\(seed)")
        let id = try await service.create(["url": url, "filename": name, "connections": 4])["id"] as! String
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let job = try await service.job(id)
            if job["state"] as? String == "completed" { return (id, false) }
            if let total = job["bytesTotal"] as? Int, job["bytesDone"] as? Int == total { return (id, true) }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw RawHTTPClient.Failure(description: "job \(id) never got all its bytes")
    }

    @Test func aPauseDuringTheFinalHashHasOneOutcome() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            var hits = 0
            for index in 0..<Self.attempts {
                let name = "race-\(index).bin"
                let (id, inWindow) = try await Self.startAndWaitForTheLastByte(service, name: name, seed: index)
                try await Task.sleep(for: Self.delay(index))
                // The pause answers once the run has ended: a run that placed its file is
                // honoured (completed), one that did not stays paused, and the answer is final.
                let reply = try await service.request(.POST, "/jobs/\(id)/pause")
                // 409: it had completed before the pause came.
                let answered = reply.status == 409 ? "completed" : try reply.json()["state"] as? String
                #expect(["paused", "completed"].contains(answered))
                let state = try await service.job(id)["state"] as? String
                #expect(state == answered, "the outcome changed after the pause answered")
                if state == "paused" {
                    #expect(try Self.documents(service, prefix: "race-\(index)").isEmpty, "a paused job's file was placed")
                    _ = try await service.request(.POST, "/jobs/\(id)/resume")
                    let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
                    #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: Self.size, seed: UInt64(index)))
                }
                // Whoever won: exactly one file, under its own name, never " (1)".
                #expect(try Self.documents(service, prefix: "race-\(index)") == [name])
                if inWindow { hits += 1 }
            }
            #expect(hits > 0, "the pause never landed while the file was being verified")
        }
    }

    @Test func aDeleteWithItsFileDuringTheFinalHashLeavesNothing() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            var hits = 0
            for index in 0..<Self.attempts {
                let (id, inWindow) = try await Self.startAndWaitForTheLastByte(service, name: "gone-\(index).bin", seed: index)
                try await Task.sleep(for: Self.delay(index))
                #expect(try await service.request(.DELETE, "/jobs/\(id)?deleteFile=true").status == 204)
                let left = try Self.documents(service, prefix: "gone-")
                #expect(left.isEmpty, "attempt \(index): \(left)")
                #expect(!FileManager.default.fileExists(atPath: service.data + "/cache/\(id).part"))
                #expect(try await service.request(.GET, "/jobs/\(id)").status == 404)
                if inWindow { hits += 1 }
            }
            #expect(hits > 0, "the delete never landed while the file was being verified")
        }
    }
}
