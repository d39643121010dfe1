import Crypto
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// `signatureUrl` through the service (CONTRACT.md §8): refused without `--trusted-keys`;
/// with them, the job names the key that verified its checksum file, or fails
/// `signature_invalid` with nothing fetched.
@Suite(.enabled(if: SigningFixtures.unavailable == nil, "\(SigningFixtures.unavailable ?? "")"))
struct SignatureAPITests {
    static let size = 1 << 20

    @Test func aSignatureUrlNeedsTrustedKeysAndAGoodOneNamesItsKey() async throws {
        try await withTemporaryDirectory { directory in
            let keys = directory.path + "/keys"
            try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
            let minisign = try SigningFixtures.MinisignKey(in: directory.path, name: "release")
            try FileManager.default.copyItem(atPath: minisign.publicKey, toPath: keys + "/release.pub")
            let stranger = try SigningFixtures.MinisignKey(in: directory.path, name: "stranger")
            // Without keys, nothing to check a signature with: refused, nothing made.
            try await RouterHarness.with { (service: RouterHarness) async throws in
                let refused = try await service.send(
                    .post, "/jobs",
                    ["url": service.testdata("/testdata/100"), "signatureUrl": "http://127.0.0.1:9/SHA256SUMS.minisig"])
                #expect(refused.status == 400 && refused.errorField == "signatureUrl")
                #expect(String(decoding: refused.bodyData, as: UTF8.self).contains("--trusted-keys"))
            }
            try await ServiceHarness.with(configure: { $0.trustedKeysDirectory = keys }) { (service: ServiceHarness) async throws in
                let documents = service.data + "/documents"
                try FileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: true)
                let digest = FileDigest.hex(SHA256.hash(data: Data(TestDataContent(seed: 31).bytes(0..<Int64(Self.size)))))
                try Data("\(digest)  \(Self.size)\n".utf8).write(to: URL(fileURLWithPath: documents + "/SHA256SUMS"))
                try minisign.sign(documents + "/SHA256SUMS", to: documents + "/good.minisig")
                try stranger.sign(documents + "/SHA256SUMS", to: documents + "/bad.minisig")
                let url = service.testdata("/testdata/\(Self.size)?seed=31")
                let good =
                    try await service.create([
                        "url": url, "checksumUrl": service.base + "/files/SHA256SUMS", "signatureUrl": service.base + "/files/good.minisig",
                    ])["id"] as! String
                let done = try await service.waitFor(good) { $0["state"] as? String == "completed" }
                let integrity = done["integrity"] as? [String: Any]
                let signature = integrity?["signature"] as? [String: Any]
                #expect(signature?["format"] as? String == "minisign" && signature?["key"] as? String == minisign.keyID, "\(done)")
                #expect(signature?["verified"] as? Bool == true && integrity?["verified"] as? Bool == true)
                let bad =
                    try await service.create([
                        "url": url, "checksumUrl": service.base + "/files/SHA256SUMS", "signatureUrl": service.base + "/files/bad.minisig",
                        "filename": "bad.bin",
                    ])["id"] as! String
                let failed = try await service.waitFor(bad) { $0["state"] as? String == "failed" }
                #expect((failed["error"] as? [String: Any])?["code"] as? String == "signature_invalid", "\(failed)")
                let unverified = (failed["integrity"] as? [String: Any])?["signature"] as? [String: Any]
                #expect(unverified?["verified"] as? Bool == false && unverified?["key"] is NSNull, "\(failed)")
                #expect(failed["bytesDone"] as? Int == 0)
            }
        }
    }
}
