import Crypto
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// The origin's faults for integrity and expiring links (CONTRACT.md §8, docs/origin.md),
/// so users' tests can use them too: `corrupt=` flips bytes, `digest=1` announces the
/// uncorrupted content's digest whether asked for or not (and nothing without it), `link=`
/// names mirrors, `expires=` answers as an expired presigned URL does.
@Suite struct IntegrityFaultsTests {
    static func field(_ bytes: [UInt8]) -> String { "sha-256=:" + Data(SHA256.hash(data: bytes)).base64EncodedString() + ":" }

    @Test func corruptFlipsTheBytesAtItsOffsetsInEveryRangeAndTheDigestIsTheUncorrupted() async throws {
        try await withTemporaryDirectory { directory in
            let content = TestDataContent(seed: 3).bytes(0..<10_000)
            try await withOrigin(root: directory.path) { port in
                let path = "/testdata/10000?seed=3&corrupt=0,5000,9999&digest=1"
                var whole: RawHTTPResponse
                let deadline = ContinuousClock.now + .seconds(30)
                repeat {
                    whole = try await RawHTTPClient.request(port: port, path: path)
                } while whole.header("Repr-Digest") == nil && ContinuousClock.now < deadline
                var corrupted = content
                for offset in [0, 5000, 9999] { corrupted[offset] ^= 0xFF }
                #expect(whole.body == corrupted)
                #expect(whole.header("Repr-Digest") == Self.field(content), "the digest of what should have been sent")
                let part = try await RawHTTPClient.request(port: port, path: path, headers: ["Range": "bytes=4990-5009"])
                #expect(part.status == 206 && part.body == Array(corrupted[4990..<5010]))
                // Without digest=1 nothing is announced, even when asked for.
                let plain = try await RawHTTPClient.request(
                    port: port, path: "/testdata/10000?seed=3", headers: ["Want-Repr-Digest": "sha-256=9"])
                #expect(plain.header("Repr-Digest") == nil && plain.body == content)
            }
        }
    }

    @Test func linksNameMirrorsAndBadValuesAreRefused() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let response = try await RawHTTPClient.request(
                    port: port, path: "/testdata/100?link=http%3A%2F%2Fa.example%2Ff&link=https://b.example/g")
                #expect(response.headerValues("Link") == ["<http://a.example/f>; rel=duplicate", "<https://b.example/g>; rel=duplicate"])
                for query in ["link=ftp://x/", "link=http://a.example/%3E%0D%0AX:%201", "corrupt=x", "expires=-1"] {
                    let refused = try await RawHTTPClient.request(port: port, path: "/testdata/100?" + query)
                    #expect(refused.status == 400, "\(query)")
                }
            }
        }
    }

    @Test func anExpiredLinkAnswers403AsS3Does() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let now = Int(Date().timeIntervalSince1970)
                let expired = try await RawHTTPClient.request(port: port, path: "/testdata/100?expires=\(now - 1)")
                #expect(expired.status == 403 && expired.header("Content-Type") == "application/xml")
                let text = String(decoding: expired.body, as: UTF8.self)
                #expect(text.contains("<Code>AccessDenied</Code><Message>Request has expired</Message>"), "\(text)")
                let live = try await RawHTTPClient.request(port: port, path: "/testdata/100?expires=\(now + 3600)")
                #expect(live.status == 200 && live.body.count == 100)
            }
        }
    }
}
