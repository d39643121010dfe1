import Crypto
import Foundation
import Hummingbird
@testable import RangeOrigin
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// RFC 9530 at the origin: `Want-Repr-Digest: sha-256=N` gets `Repr-Digest` with the
/// SHA-256 of the whole representation on 200 and 206, on both of the origin's paths. The
/// expected values are made here with swift-crypto and Foundation's base64, not with the
/// origin's own formatter.
@Suite struct ReprDigestOriginTests {
    static let want = ["Want-Repr-Digest": "sha-256=9"]

    static func field(_ bytes: [UInt8]) -> String {
        "sha-256=:" + Data(SHA256.hash(data: bytes)).base64EncodedString() + ":"
    }

    static func content(_ count: Int, salt: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9 &+ salt) }
    }

    /// Requests that reached the router: those the event-loop fast path did not answer.
    final class RouterHits: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// The origin over `root` on a free port, with the fast path when `fastPath` is true,
    /// counting the requests that reach the router.
    /// Sends the request until its answer carries `Repr-Digest`: the first starts the
    /// computation and goes without it, as may others while it runs.
    static func untilDigest(
        port: Int, method: String = "GET", path: String, headers: [String: String] = want
    ) async throws -> RawHTTPResponse {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let response = try await RawHTTPClient.request(port: port, method: method, path: path, headers: headers)
            if response.header("Repr-Digest") != nil || ContinuousClock.now > deadline { return response }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    static func key(seed: UInt64, size: Int64) -> RangeOrigin.TestDataDigestKey {
        RangeOrigin.TestDataDigestKey(content: TestDataContent(seed: seed), size: size)
    }

    static func withDigestOrigin(
        root: String, fastPath: Bool = true,
        _ body: @Sendable (_ port: Int, _ origin: RangeOrigin, _ hits: RouterHits) async throws -> Void
    ) async throws {
        let origin = try RangeOrigin(root: root)
        let router = Router()
        origin.addRoutes(to: router)
        let routes = router.buildResponder()
        let hits = RouterHits()
        try await withRunningServer(
            responder: CallbackResponder { request, context in
                hits.add()
                return try await routes.respond(to: request, context: context)
            },
            channelHandlers: { fastPath ? [origin.fileFastPath(admits: { _ in true })] : [] }
        ) { port in
            try await body(port, origin, hits)
        }
    }

    // MARK: Files

    @Test func filesGetTheWholeFilesDigestOnTheRoutersPath() async throws {
        try await withTemporaryDirectory { directory in
            let content = Self.content(300_000)
            _ = try directory.write("data.bin", content)
            let expected = Self.field(content)
            try await Self.withDigestOrigin(root: directory.path, fastPath: false) { port, origin, _ in
                let whole = try await Self.untilDigest(port: port, path: "/files/data.bin")
                #expect(whole.status == 200)
                #expect(whole.header("Repr-Digest") == expected)
                #expect(whole.body == content)

                let single = try await RawHTTPClient.request(
                    port: port, path: "/files/data.bin", headers: Self.want.merging(["Range": "bytes=100-199"]) { $1 }
                )
                #expect(single.status == 206)
                #expect(single.header("Content-Range") == "bytes 100-199/300000")
                #expect(single.header("Repr-Digest") == expected)

                let multipart = try await RawHTTPClient.request(
                    port: port, path: "/files/data.bin", headers: Self.want.merging(["Range": "bytes=0-9,1000-1009"]) { $1 }
                )
                #expect(multipart.status == 206)
                #expect(multipart.header("Content-Type")?.hasPrefix("multipart/byteranges") == true)
                #expect(multipart.header("Repr-Digest") == expected)

                let head = try await RawHTTPClient.request(port: port, method: "HEAD", path: "/files/data.bin", headers: Self.want)
                #expect(head.status == 200)
                #expect(head.header("Content-Length") == "300000")
                #expect(head.header("Repr-Digest") == expected)
                #expect(origin.fileDigests.computations == 1)
            }
        }
    }

    @Test func theFastPathSendsAKnownDigestAndHandsOnAnUnknownOne() async throws {
        try await withTemporaryDirectory { directory in
            let content = Self.content(200_000, salt: 1)
            _ = try directory.write("fast.bin", content)
            let expected = Self.field(content)
            try await Self.withDigestOrigin(root: directory.path) { port, origin, hits in
                // Without the field the fast path answers, as before, and computes nothing.
                let plain = try await RawHTTPClient.request(port: port, path: "/files/fast.bin")
                #expect(plain.header("Repr-Digest") == nil)
                #expect(hits.value == 0)
                #expect(origin.fileDigests.computations == 0)

                // Not known yet: the router starts computing it, answering without it
                // until it is known.
                let first = try await RawHTTPClient.request(port: port, path: "/files/fast.bin", headers: Self.want)
                #expect(first.status == 200)
                #expect(hits.value == 1)
                #expect(try await Self.untilDigest(port: port, path: "/files/fast.bin").header("Repr-Digest") == expected)
                let routed = hits.value

                // Known: 200 and a single 206 come from the fast path, with it.
                let whole = try await RawHTTPClient.request(port: port, path: "/files/fast.bin", headers: Self.want)
                #expect(whole.status == 200)
                #expect(whole.header("Repr-Digest") == expected)
                #expect(whole.body == content)
                let single = try await RawHTTPClient.request(
                    port: port, path: "/files/fast.bin", headers: Self.want.merging(["Range": "bytes=-10"]) { $1 }
                )
                #expect(single.status == 206)
                #expect(single.header("Repr-Digest") == expected)
                #expect(single.body == Array(content.suffix(10)))
                #expect(hits.value == routed)

                // Multipart and HEAD are the router's anyway, and carry it too.
                let multipart = try await RawHTTPClient.request(
                    port: port, path: "/files/fast.bin", headers: Self.want.merging(["Range": "bytes=0-0,5-5"]) { $1 }
                )
                #expect(multipart.status == 206)
                #expect(multipart.header("Repr-Digest") == expected)
                let head = try await RawHTTPClient.request(port: port, method: "HEAD", path: "/files/fast.bin", headers: Self.want)
                #expect(head.header("Repr-Digest") == expected)
                #expect(hits.value == routed + 2)
                #expect(origin.fileDigests.computations == 1)
            }
        }
    }

    @Test(arguments: [
        [:], ["Want-Repr-Digest": "sha-256=0"], ["Want-Repr-Digest": "sha-512=10"], ["Want-Repr-Digest": "sha-256=:AA==:"],
        ["Want-Content-Digest": "sha-256=9"], ["Want-Repr-Digest": "sha-256=9 garbage"],
    ])
    func noDigestUnlessSHA256IsWanted(headers: [String: String]) async throws {
        try await withTemporaryDirectory { directory in
            _ = try directory.write("data.bin", Self.content(1000))
            for fastPath in [true, false] {
                try await Self.withDigestOrigin(root: directory.path, fastPath: fastPath) { port, origin, _ in
                    for path in ["/files/data.bin", "/testdata/1000?seed=424242"] {
                        let response = try await RawHTTPClient.request(port: port, path: path, headers: headers)
                        #expect(response.status == 200)
                        #expect(response.header("Repr-Digest") == nil, "\(path) \(headers)")
                    }
                    #expect(origin.fileDigests.computations == 0)
                    #expect(origin.testDataDigests.computations(of: Self.key(seed: 424242, size: 1000)) == 0)
                }
            }
        }
    }

    @Test func answersWithoutTheRepresentationNeitherCarryNorComputeIt() async throws {
        try await withTemporaryDirectory { directory in
            _ = try directory.write("data.bin", Self.content(1000))
            try await Self.withDigestOrigin(root: directory.path) { port, origin, _ in
                let etag = try #require(try await RawHTTPClient.request(port: port, path: "/files/data.bin").header("ETag"))
                let notModified = try await RawHTTPClient.request(
                    port: port, path: "/files/data.bin", headers: Self.want.merging(["If-None-Match": etag]) { $1 }
                )
                #expect(notModified.status == 304)
                #expect(notModified.header("Repr-Digest") == nil)
                let unsatisfiable = try await RawHTTPClient.request(
                    port: port, path: "/files/data.bin", headers: Self.want.merging(["Range": "bytes=5000-"]) { $1 }
                )
                #expect(unsatisfiable.status == 416)
                #expect(unsatisfiable.header("Repr-Digest") == nil)
                #expect(origin.fileDigests.computations == 0)
            }
        }
    }

    @Test func aFilesDigestIsComputedOnceAndAgainAfterItChanges() async throws {
        try await withTemporaryDirectory { directory in
            let first = Self.content(4 << 20, salt: 2)
            let path = try directory.write("big.bin", first)
            try await Self.withDigestOrigin(root: directory.path) { port, origin, _ in
                // Many first requests at once start one computation.
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<12 {
                        let range = index % 2 == 0 ? [:] : ["Range": "bytes=\(index)-\(index + 99)"]
                        group.addTask {
                            try await RawHTTPClient.request(
                                port: port, method: index % 3 == 0 ? "HEAD" : "GET", path: "/files/big.bin",
                                headers: Self.want.merging(range) { $1 }
                            ).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.count == 12)
                #expect(try await Self.untilDigest(port: port, path: "/files/big.bin").header("Repr-Digest") == Self.field(first))
                #expect(origin.fileDigests.computations == 1)

                // Another version of the file (another size, and so another identity).
                let second = Self.content((4 << 20) + 1, salt: 3)
                try Data(second).write(to: URL(fileURLWithPath: path))
                let changed = try await Self.untilDigest(port: port, path: "/files/big.bin")
                #expect(changed.header("Repr-Digest") == Self.field(second))
                for _ in 0..<3 {
                    let response = try await RawHTTPClient.request(port: port, path: "/files/big.bin", headers: Self.want)
                    #expect(response.header("Repr-Digest") == Self.field(second))
                }
                #expect(origin.fileDigests.computations == 2)
            }
        }
    }

    // MARK: Test data

    @Test func testDataGetsTheDigestOfItsContent() async throws {
        try await withTemporaryDirectory { directory in
            let size = 3 << 20
            let content = TestDataContent(seed: 7).bytes(0..<Int64(size))
            let expected = Self.field(content)
            try await Self.withDigestOrigin(root: directory.path) { port, origin, _ in
                let path = "/testdata/3M?seed=7&digest=1"
                let whole = try await Self.untilDigest(port: port, path: path)
                #expect(whole.status == 200)
                #expect(whole.header("Repr-Digest") == expected)
                let single = try await RawHTTPClient.request(
                    port: port, path: path, headers: Self.want.merging(["Range": "bytes=10-20"]) { $1 }
                )
                #expect(single.status == 206)
                #expect(single.header("Repr-Digest") == expected)
                let multipart = try await RawHTTPClient.request(
                    port: port, path: path, headers: Self.want.merging(["Range": "bytes=0-1,9-9"]) { $1 }
                )
                #expect(multipart.status == 206)
                #expect(multipart.header("Repr-Digest") == expected)
                let head = try await RawHTTPClient.request(port: port, method: "HEAD", path: path, headers: Self.want)
                #expect(head.header("Repr-Digest") == expected)
                // Options that do not change the bytes share the digest; another seed does not.
                let tagged = try await RawHTTPClient.request(port: port, path: path + "&etag=other", headers: Self.want)
                #expect(tagged.header("Repr-Digest") == expected)
                #expect(origin.testDataDigests.computations(of: Self.key(seed: 7, size: Int64(size))) == 1)
                let other = try await Self.untilDigest(port: port, path: "/testdata/3M?seed=8&digest=1")
                #expect(other.header("Repr-Digest") == Self.field(TestDataContent(seed: 8).bytes(0..<Int64(size))))
                #expect(origin.testDataDigests.computations(of: Self.key(seed: 8, size: Int64(size))) == 1)
            }
        }
    }

    @Test func badDigestSendsAWrongOne() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.withDigestOrigin(root: directory.path) { port, _, _ in
                let response = try await Self.untilDigest(port: port, path: "/testdata/100K?baddigest=1")
                #expect(response.status == 200)
                let sent = try #require(response.header("Repr-Digest"))
                let right = Array(SHA256.hash(data: TestDataContent().bytes(0..<(100 << 10))))
                let sentBytes = try #require(Data(base64Encoded: String(sent.dropFirst("sha-256=:".count).dropLast())))
                #expect(sent.hasPrefix("sha-256=:") && sent.hasSuffix(":"))
                #expect(Array(sentBytes) != right)
                #expect(Array(sentBytes.dropFirst()) == Array(right.dropFirst()))
            }
        }
    }

    @Test func testDataAbove64MiBGetsNoDigest() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.withDigestOrigin(root: directory.path) { port, origin, _ in
                let head = try await RawHTTPClient.request(port: port, method: "HEAD", path: "/testdata/65M?digest=1", headers: Self.want)
                #expect(head.status == 200)
                #expect(head.header("Repr-Digest") == nil)
                let tail = try await RawHTTPClient.request(
                    port: port, path: "/testdata/1T?digest=1", headers: Self.want.merging(["Range": "bytes=-4"]) { $1 }
                )
                #expect(tail.status == 206)
                #expect(tail.header("Repr-Digest") == nil)
                #expect(origin.testDataDigests.computations(of: Self.key(seed: 0, size: 65 << 20)) == 0)
                #expect(origin.testDataDigests.computations(of: Self.key(seed: 0, size: 1 << 40)) == 0)
            }
        }
    }

    /// A digest not known yet is left out of the first answer, and the computation that
    /// answer started gives it to the answers after it.
    @Test func aDigestNotKnownYetIsLeftOutThenSent() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.withDigestOrigin(root: directory.path) { port, origin, _ in
                let path = "/testdata/8M?seed=11&digest=1"
                let first = try await RawHTTPClient.request(
                    port: port, path: path, headers: Self.want.merging(["Range": "bytes=0-0"]) { $1 }
                )
                #expect(first.status == 206)
                #expect(first.header("Repr-Digest") == nil)
                let deadline = ContinuousClock.now + .seconds(30)
                var sent: String?
                while sent == nil, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    sent = try await RawHTTPClient.request(
                        port: port, path: path, headers: Self.want.merging(["Range": "bytes=0-0"]) { $1 }
                    ).header("Repr-Digest")
                }
                var hasher = SHA256()
                let content = TestDataContent(seed: 11)
                for offset in stride(from: Int64(0), to: 8 << 20, by: 1 << 20) {
                    hasher.update(data: content.bytes(offset..<(offset + (1 << 20))))
                }
                #expect(sent == "sha-256=:" + Data(hasher.finalize()).base64EncodedString() + ":")
                #expect(origin.testDataDigests.computations(of: Self.key(seed: 11, size: 8 << 20)) == 1)
            }
        }
    }
}
