import Foundation
import Synchronization
import NIOHTTP1
import SluiceCore
import SluiceTestSupport
import Testing
import SluiceAPI

@Suite struct JobsAPITests {
    static let jobKeys: Set<String> = [
        "id", "url", "state", "filename", "bytesTotal", "bytesDone", "progress", "speed", "eta", "connections",
        "resumable", "sha256", "integrity", "sources", "path", "error", "priority", "createdAt", "updatedAt", "completedAt", "retryAt",
        "after", "waitingFor", "heldBy", "startAt", "ignoreSchedule", "limitRate", "notify", "proxy", "insecure", "node",
    ]

    @Test func createRunsTheDownloadToCompletion() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let body = String(
                decoding: try JSONSerialization.data(withJSONObject: ["url": service.testdata("/testdata/3M?seed=4"), "connections": 3]),
                as: UTF8.self)
            let reply = try await service.request(.post, "/jobs", json: body)
            #expect(reply.status == 201)
            #expect(reply.header("Content-Type") == "application/json")
            let created = try reply.json()
            let id = try #require(created["id"] as? String)
            #expect(reply.header("Location") == "/jobs/\(id)")
            #expect(Set(created.keys) == Self.jobKeys)
            #expect(created["connections"] as? Int == 3)
            #expect(created["error"] is NSNull)
            #expect((created["createdAt"] as? String)?.hasSuffix("Z") == true)

            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            let expected = ServiceHarness.expectedSHA256(size: 3 << 20, seed: 4)
            #expect(done["sha256"] as? String == expected)
            #expect(done["path"] as? String == "3M")
            #expect(done["filename"] as? String == "3M")
            #expect(done["progress"] as? Double == 1)
            #expect(done["bytesDone"] as? Int == 3 << 20)
            #expect(done["bytesTotal"] as? Int == 3 << 20)
            #expect(done["completedAt"] is String)
            #expect(FileManager.default.fileExists(atPath: service.data + "/documents/3M"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/cache").isEmpty)
            // The finished file is served by the origin at /files/PATH.
            let file = try await service.request(.get, "/files/3M", headers: ["Range": "bytes=0-9"])
            #expect(file.status == 206)
        }
    }

    @Test func headWorksWhereGetDoesAndOddPathsAreJSON404s() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            #expect(try await service.request(.head, "/jobs").status == 200)
            #expect(try await service.request(.head, "/healthz").status == 200)
            let spec = try await service.request(.get, "/openapi.yaml", authorized: false)
            #expect(spec.status == 200)
            #expect(spec.header("Content-Type") == "application/yaml; charset=utf-8")
            #expect(String(decoding: spec.body, as: UTF8.self).hasPrefix("openapi: 3.1"))
            for path in ["/%2e%2e/etc/passwd", "/..%2f..%2fetc/passwd", "/%zz"] {
                let raw = try await service.raw("GET", path)
                #expect(raw.status == 404, "\(path)")
                #expect(raw.header("Content-Type") == "application/json", "\(path)")
            }
        }
    }

    @Test func pauseAndResumeAreIdempotentAndCompletedJobsRefuse() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let slow = try await service.create(["url": service.testdata("/testdata/32M?rate=4M"), "paused": true])
            let id = slow["id"] as! String
            #expect(slow["state"] as? String == "paused")
            #expect(try await service.request(.post, "/jobs/\(id)/pause").json()["state"] as? String == "paused")
            let resumed = try await service.request(.post, "/jobs/\(id)/resume")
            #expect(resumed.status == 200)
            #expect(["queued", "running"].contains(try resumed.json()["state"] as? String))
            let again = try await service.request(.post, "/jobs/\(id)/resume")
            #expect(["queued", "running"].contains(try again.json()["state"] as? String))
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > 0 }
            let paused = try await service.request(.post, "/jobs/\(id)/pause")
            #expect(try paused.json()["state"] as? String == "paused")
            #expect(try await service.request(.post, "/jobs/\(id)/pause").json()["state"] as? String == "paused")
            // Paused means paused: the pause answers once the run has stopped, so no segment
            // is being fetched and the bytes it answered are the job's, and stay so.
            let segments = try JSONSerialization.jsonObject(with: try await service.request(.get, "/jobs/\(id)/segments").body)
            #expect((segments as? [[String: Any]])?.allSatisfy { $0["active"] as? Bool == false } == true)
            #expect(try await service.job(id)["bytesDone"] as? Int == (try paused.json()["bytesDone"] as? Int))

            let small = try await service.create(["url": service.testdata("/testdata/10K")])
            let smallID = small["id"] as! String
            try await service.waitFor(smallID) { $0["state"] as? String == "completed" }
            for action in ["pause", "resume"] {
                let reply = try await service.request(.post, "/jobs/\(smallID)/\(action)")
                #expect(reply.status == 409)
                #expect(reply.errorCode == "invalid_transition")
            }
        }
    }

    @Test func failedJobsSayWhyAndCanBeRetried() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let job = try await service.create(["url": service.testdata("/files/not-there.iso")])
            let id = job["id"] as! String
            let failed = try await service.waitFor(id) { $0["state"] as? String == "failed" }
            let error = try #require(failed["error"] as? [String: Any])
            #expect(error["code"] as? String == "http_status")
            #expect((error["message"] as? String)?.contains("404") == true)
            let retried = try await service.request(.post, "/jobs/\(id)/resume").json()
            #expect(["queued", "running", "failed"].contains(retried["state"] as? String))
            try await service.waitFor(id) { $0["state"] as? String == "failed" }

            let mismatch = try await service.create(["url": service.testdata("/testdata/10K"), "sha256": String(repeating: "a", count: 64)])
            let bad = try await service.waitFor(mismatch["id"] as! String) { $0["state"] as? String == "failed" }
            #expect((bad["error"] as? [String: Any])?["code"] as? String == "checksum_mismatch")
        }
    }

    @Test func deleteStopsRemovesPartialsAndOptionallyTheFile() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let running = try await service.create(["url": service.testdata("/testdata/64M?rate=4M")])
            let id = running["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) > 0 }
            // `ID.part`, or `ID.eEPOCH.part` on the cluster's store.
            let partials = {
                (try? FileManager.default.contentsOfDirectory(atPath: service.data + "/cache"))?.filter {
                    $0.hasPrefix(id + ".") && $0.hasSuffix(".part")
                } ?? []
            }
            #expect(partials().count == 1)
            #expect(try await service.request(.delete, "/jobs/\(id)").status == 204)
            #expect(try await service.request(.get, "/jobs/\(id)").status == 404)
            #expect(partials().isEmpty)
            #expect(try await service.request(.delete, "/jobs/\(id)").status == 404)

            let kept = try await service.create(["url": service.testdata("/testdata/10K"), "filename": "kept.bin"])
            try await service.waitFor(kept["id"] as! String) { $0["state"] as? String == "completed" }
            #expect(try await service.request(.delete, "/jobs/\(kept["id"] as! String)").status == 204)
            #expect(FileManager.default.fileExists(atPath: service.data + "/documents/kept.bin"))

            let gone = try await service.create(["url": service.testdata("/testdata/10K"), "filename": "gone.bin"])
            try await service.waitFor(gone["id"] as! String) { $0["state"] as? String == "completed" }
            #expect(try await service.request(.delete, "/jobs/\(gone["id"] as! String)?deleteFile=maybe").status == 400)
            #expect(try await service.request(.delete, "/jobs/\(gone["id"] as! String)?deleteFile=true").status == 204)
            #expect(!FileManager.default.fileExists(atPath: service.data + "/documents/gone.bin"))
        }
    }

    @Test func namesAreTakenFromTheResponseAndNeverOverwrite() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let first = try await service.create(["url": service.testdata("/testdata/1K")])
            let second = try await service.create(["url": service.testdata("/testdata/1K?seed=1")])
            let a = try await service.waitFor(first["id"] as! String) { $0["state"] as? String == "completed" }
            let b = try await service.waitFor(second["id"] as! String) { $0["state"] as? String == "completed" }
            #expect(Set([a["path"] as? String, b["path"] as? String]) == Set(["1K", "1K (1)"]))
        }
    }

    @Test func listingFiltersAndPagesNewestFirst() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            var ids: [String] = []
            for index in 0..<5 {
                ids.append(
                    try await service.create(["url": service.testdata("/testdata/1K?seed=\(index)"), "paused": true])["id"] as! String)
            }
            let done = try await service.create(["url": service.testdata("/testdata/1K")])["id"] as! String
            try await service.waitFor(done) { $0["state"] as? String == "completed" }

            let all = try await service.request(.get, "/jobs").json()["jobs"] as! [[String: Any]]
            #expect(all.map { $0["id"] as! String } == [done] + ids.reversed())
            let paused = try await service.request(.get, "/jobs?state=paused").json()["jobs"] as! [[String: Any]]
            #expect(paused.count == 5)
            let both = try await service.request(.get, "/jobs?state=paused,completed").json()["jobs"] as! [[String: Any]]
            #expect(both.count == 6)
            let page1 = try await service.request(.get, "/jobs?limit=2").json()["jobs"] as! [[String: Any]]
            #expect(page1.map { $0["id"] as! String } == [done, ids[4]])
            let page2 = try await service.request(.get, "/jobs?limit=2&after=\(ids[4])").json()["jobs"] as! [[String: Any]]
            #expect(page2.map { $0["id"] as! String } == [ids[3], ids[2]])
            // A page far into the list (the dashboard scrolled), filtered or not, with a cursor.
            let far = try await service.request(.get, "/jobs?limit=2&offset=4").json()["jobs"] as! [[String: Any]]
            #expect(far.map { $0["id"] as! String } == [ids[1], ids[0]])
            let farPaused = try await service.request(.get, "/jobs?state=paused&offset=3").json()["jobs"] as! [[String: Any]]
            #expect(farPaused.map { $0["id"] as! String } == [ids[1], ids[0]])
            let afterAndOffset =
                try await service.request(.get, "/jobs?after=\(ids[4])&offset=1&limit=1").json()["jobs"] as! [[String: Any]]
            #expect(afterAndOffset.map { $0["id"] as! String } == [ids[2]])
            let past = try await service.request(.get, "/jobs?offset=6").json()["jobs"] as! [[String: Any]]
            #expect(past.isEmpty)
            for bad in [
                "/jobs?state=sleeping", "/jobs?limit=0", "/jobs?limit=abc", "/jobs?after=nope", "/jobs?offset=-1",
                "/jobs?offset=x", "/jobs?offset=100000001", "/jobs?offset=99999999999999999999",
            ] {
                let reply = try await service.request(.get, bad)
                #expect(reply.status == 400, "\(bad)")
                #expect(reply.errorCode == "invalid_field")
            }
        }
    }

    @Test func maxActiveAndPriorityDecideWhatRuns() async throws {
        try await RouterHarness.with(maxActive: 1) { (service: RouterHarness) async throws in
            let first = try await service.create(["url": service.testdata("/testdata/64M?rate=2M")])["id"] as! String
            try await service.waitFor(first) { $0["state"] as? String == "running" }
            let low = try await service.create(["url": service.testdata("/testdata/64M?rate=2M&seed=1")])["id"] as! String
            let high = try await service.create(["url": service.testdata("/testdata/64M?rate=2M&seed=2"), "priority": 5])["id"] as! String
            #expect(try await service.job(low)["state"] as? String == "queued")
            #expect(try await service.job(high)["state"] as? String == "queued")
            _ = try await service.request(.post, "/jobs/\(first)/pause")
            try await service.waitFor(high) { $0["state"] as? String == "running" }
            #expect(try await service.job(low)["state"] as? String == "queued")
            let running = try await service.request(.get, "/jobs?state=running").json()["jobs"] as! [[String: Any]]
            #expect(running.count == 1)
        }
    }
}
