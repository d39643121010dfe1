import Foundation
import SluiceTestSupport
import Testing

/// CONTRACT §2's `dir` on `POST /jobs`: a sub-directory of `documents/`, made as needed;
/// one that leads out is 400 `invalid_field` and makes no job.
@Suite struct DirFieldTests {
    @Test func aDirUnderTheDocumentsGetsTheFileAndOneLeadingOutIsRefused() async throws {
        try await RouterHarness.with { service in
            let documents = service.data + "/documents"
            let job = try await service.create(["url": service.testdata("/testdata/64K"), "dir": "music/live", "filename": "b.bin"])
            let done = try await service.waitFor(try #require(job["id"] as? String)) { $0["state"] as? String == "completed" }
            #expect(done["path"] as? String == "music/live/b.bin")
            #expect(FileManager.default.fileExists(atPath: documents + "/music/live/b.bin"))
            let outside = try TemporaryDirectory()
            defer { outside.remove() }
            try FileManager.default.createSymbolicLink(atPath: documents + "/out", withDestinationPath: outside.path)
            let refused = try await service.request(
                .post, "/jobs", json: #"{"url":"\#(service.testdata("/testdata/1K"))","dir":"out/x"}"#)
            #expect(refused.status == 400)
            #expect(refused.errorCode == "invalid_field")
            #expect((try refused.json()["error"] as? [String: Any])?["field"] as? String == "dir")
            let jobs = try await service.request(.get, "/jobs").json()["jobs"] as? [Any]
            #expect(jobs?.count == 1)
        }
    }
}
