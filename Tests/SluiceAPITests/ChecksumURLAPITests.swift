import Crypto
import Foundation
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// CONTRACT.md §8, `checksumUrl` and `checksumName` through the service: the digest read
/// from a checksum file the service's own origin serves, kept with the job across a restart;
/// a file without the entry fails the job with nothing fetched; bad fields change nothing.
@Suite struct ChecksumURLAPITests {
    static let size = 1 << 20

    static func integrity(_ job: [String: Any]) -> [String: Any] { job["integrity"] as? [String: Any] ?? [:] }

    @Test func theDigestComesFromTheChecksumFileAndStaysWithTheJob() async throws {
        let digest = FileDigest.hex(SHA256.hash(data: Data(TestDataContent(seed: 11).bytes(0..<Int64(Self.size)))))
        try await withTemporaryDirectory { directory in
            let data = directory.path + "/data"
            let created = Mutex("")
            try await ServiceHarness.with(dataDirectory: data) { (service: ServiceHarness) async throws in
                // The origin serves the documents: the checksum file is one of them, signed
                // layouts aside (BSD tags, as Fedora's CHECKSUM files).
                try FileManager.default.createDirectory(atPath: data + "/documents", withIntermediateDirectories: true)
                try Data("SHA256 (\(Self.size)) = \(digest)\n".utf8).write(to: URL(fileURLWithPath: data + "/documents/CHECKSUM"))
                let id =
                    try await service.create([
                        "url": service.testdata("/testdata/\(Self.size)?seed=11"), "checksumUrl": service.base + "/files/CHECKSUM",
                    ])["id"] as! String
                created.withLock { $0 = id }
                let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
                let expected = Self.integrity(done)["expected"] as? [String: Any]
                #expect(expected?["value"] as? String == digest && expected?["source"] as? String == "checksumUrl", "\(done)")
                #expect(Self.integrity(done)["verified"] as? Bool == true)
            }
            // Stored: the next start shows where the digest came from.
            try await ServiceHarness.with(dataDirectory: data) { (service: ServiceHarness) async throws in
                let job = try await service.job(created.withLock { $0 })
                let expected = Self.integrity(job)["expected"] as? [String: Any]
                #expect(expected?["value"] as? String == digest && expected?["source"] as? String == "checksumUrl", "\(job)")
            }
        }
    }

    @Test func aChecksumFileWithoutTheEntryFailsTheJobHavingFetchedNothing() async throws {
        try await ServiceHarness.with { (service: ServiceHarness) async throws in
            try FileManager.default.createDirectory(atPath: service.data + "/documents", withIntermediateDirectories: true)
            try Data("\(String(repeating: "3", count: 64))  other.iso\n".utf8).write(
                to: URL(fileURLWithPath: service.data + "/documents/SHA256SUMS"))
            let id =
                try await service.create([
                    "url": service.testdata("/testdata/\(Self.size)?seed=12"), "checksumUrl": service.base + "/files/SHA256SUMS",
                ])["id"] as! String
            let failed = try await service.waitFor(id) { $0["state"] as? String == "failed" }
            let error = failed["error"] as? [String: Any]
            #expect(error?["code"] as? String == "checksum_unavailable", "\(failed)")
            #expect((error?["message"] as? String)?.contains("no entry for \(Self.size)") == true, "\(failed)")
            #expect(failed["bytesDone"] as? Int == 0 && Self.integrity(failed)["expected"] is NSNull)
        }
    }

    @Test func checksumSourcesThatCannotBeUsedAreRefusedAndChangeNothing() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let url = service.testdata("/testdata/1000")
            let sums = "http://127.0.0.1:9/SHA256SUMS"
            for (fields, field, words) in [
                (["url": url, "checksumName": "a.iso"], "checksumName", "give checksumUrl"),
                (["url": url, "checksumUrl": sums, "checksum": "md5=\(String(repeating: "0", count: 32))"], "checksumUrl", "not both"),
                (["url": url, "checksumUrl": sums, "sha256": String(repeating: "0", count: 64)], "checksumUrl", "not both"),
                (["url": url, "checksumUrl": "ftp://127.0.0.1/SUMS"], "checksumUrl", "only http and https"),
                (["url": url, "checksumUrl": "SUMS"], "checksumUrl", "checksumUrl must be an absolute"),
                (["url": url, "checksumUrl": sums, "checksumName": "a\u{7}.iso"], "checksumName", "control characters"),
                (["url": url, "checksumUrl": 7], "checksumUrl", "wrong type"),
            ] as [([String: Any], String, String)] {
                let refused = try await service.send(.post, "/jobs", fields)
                let body = String(decoding: refused.bodyData, as: UTF8.self)
                #expect(refused.status == 400 && refused.errorField == field && body.contains(words), "\(fields): \(body)")
            }
            let listed = try await service.call(.get, "/jobs", json: nil).json()["jobs"] as? [[String: Any]]
            #expect(listed?.isEmpty == true, "a refused create made nothing")
        }
    }
}
