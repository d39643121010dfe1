import Crypto
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// CONTRACT.md §8, `checksum`: the four algorithms as aria2 spells them, checked on the
/// finished file, and the job's `integrity`.
@Suite struct ChecksumAPITests {
    static let size = 1 << 20

    static func content(seed: UInt64) -> Data { Data(TestDataContent(seed: seed).bytes(0..<Int64(size))) }

    static func integrity(_ job: [String: Any]) -> [String: Any] { job["integrity"] as? [String: Any] ?? [:] }

    @Test func aSHA512IsCheckedAndTheJobSaysSo() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let digest = FileDigest.hex(SHA512.hash(data: Self.content(seed: 7)))
            let id =
                try await service.create([
                    "url": service.testdata("/testdata/\(Self.size)?seed=7"), "checksum": "SHA-512=\(digest.uppercased())",
                ])["id"] as! String
            let done = try await service.waitFor(id) { $0["state"] as? String == "completed" }
            let integrity = Self.integrity(done)
            let expected = integrity["expected"] as? [String: Any]
            #expect(expected?["algorithm"] as? String == "sha-512" && expected?["value"] as? String == digest, "\(integrity)")
            #expect(expected?["source"] as? String == "checksum")
            #expect(integrity["verified"] as? Bool == true && integrity["signature"] is NSNull, "\(integrity)")
        }
    }

    @Test func aWrongMD5FailsTheJobNamingBothDigests() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let actual = FileDigest.hex(Insecure.MD5.hash(data: Self.content(seed: 8)))
            let wrong = String(repeating: "0", count: 32)
            let id =
                try await service.create(["url": service.testdata("/testdata/\(Self.size)?seed=8"), "checksum": "md5=\(wrong)"])["id"]
                as! String
            let failed = try await service.waitFor(id) { $0["state"] as? String == "failed" }
            let error = failed["error"] as? [String: Any]
            #expect(error?["code"] as? String == "checksum_mismatch")
            #expect(error?["message"] as? String == "MD5 is \(actual), expected \(wrong)", "\(failed)")
            #expect(Self.integrity(failed)["verified"] as? Bool == false)
            // Nothing half-made is left: no file in documents.
            #expect(try FileManager.default.contentsOfDirectory(atPath: service.data + "/documents").isEmpty)
        }
    }

    @Test func aSHA256IsAnExpectedDigestAndTwoNamesOrABadOneAreRefused() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let digest = FileDigest.hex(SHA256.hash(data: Self.content(seed: 9)))
            let url = service.testdata("/testdata/\(Self.size)?seed=9")
            let job = try await service.create(["url": url, "sha256": digest])
            let expected = Self.integrity(job)["expected"] as? [String: Any]
            #expect(expected?["algorithm"] as? String == "sha-256" && Self.integrity(job)["verified"] is NSNull)
            for (fields, words) in [
                (["url": url, "sha256": digest, "checksum": "sha-256=\(digest)"], "not both"),
                (["url": url, "checksum": "sha-1=abc"], "40 hexadecimal digits"), (["url": url, "checksum": "crc32=00"], "ALGO=HEX"),
                (["url": url, "checksum": 5], "wrong type"),
            ] as [([String: Any], String)] {
                let refused = try await service.send(.post, "/jobs", fields)
                #expect(refused.status == 400 && refused.errorField == "checksum", "\(fields)")
                #expect(
                    String(decoding: refused.bodyData, as: UTF8.self).contains(words),
                    "\(String(decoding: refused.bodyData, as: UTF8.self))")
            }
            let listed = try await service.call(.get, "/jobs", json: nil).json()["jobs"] as? [[String: Any]]
            #expect(listed?.count == 1, "a refused create made nothing")
        }
    }

    /// aria2's `checksum` option (what aria2p and the web front ends send): any of the four
    /// algorithms, shown back by `getOption`; a wrong digest is aria2's error 32.
    @Test func aria2sChecksumOptionTakesTheFourAlgorithms() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let rpc = JSONRPCTests.RPC(service: service, secret: nil)
            let sha1 = FileDigest.hex(Insecure.SHA1.hash(data: Self.content(seed: 10)))
            let url = service.testdata("/testdata/\(Self.size)?seed=10")
            let good = try await rpc.result("aria2.addUri", [[url], ["checksum": "sha-1=\(sha1)", "out": "good.bin"]])
            let bad = try await rpc.result(
                "aria2.addUri", [[url], ["checksum": "md5=" + String(repeating: "0", count: 32), "out": "bad.bin"]])
            try await service.waitFor(try JSONRPCTests.jobID(good)) { $0["state"] as? String == "completed" }
            try await service.waitFor(try JSONRPCTests.jobID(bad)) { $0["state"] as? String == "failed" }
            #expect((try await rpc.result("aria2.getOption", [good]) as? [String: Any])?["checksum"] as? String == "sha-1=\(sha1)")
            let status = try await rpc.result("aria2.tellStatus", [bad, ["status", "errorCode"]]) as? [String: Any]
            #expect(status?["status"] as? String == "error" && status?["errorCode"] as? String == "32", "\(status ?? [:])")
            let refused = try await rpc.error("aria2.addUri", [[url], ["checksum": "sha-384=" + String(repeating: "0", count: 96)]])
            #expect(refused.message?.contains("ALGO one of sha-256, sha-512, sha-1, md5") == true, "\(refused)")
        }
    }
}
