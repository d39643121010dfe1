import DownloadEngine
import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// Mirrors with a digest (CONTRACT.md §8): a mirror joins only when it agrees with the
/// primary on length, and the connections are then spread over every source that joined;
/// each source's bytes are counted; the file is checked against the digest whatever served it.
@Suite struct MirrorSpreadTests {
    static let size: Int64 = 4 << 20

    @Test func connectionsAreSpreadOverTheMirrorsThatAgree() async throws {
        let recorder = RequestRecorder()
        try await EngineHarness.with(recorder: recorder) { (harness: EngineHarness) async throws in
            let digest = Checksum(.sha256, hex: EngineHarness.expectedSHA256(size: Self.size, seed: 6))
            let sources = Mutex<[SourceState]>([])
            let result = try await harness.download(
                "/testdata/4M?seed=6", connections: 4, checksum: digest,
                mirrors: ["/testdata/4M?seed=6&etag=m1", "/testdata/3M?seed=6", "/testdata/4M?seed=6&status=404"],
                progress: { progress in if let listed = progress.sources { sources.withLock { $0 = listed } } }
            ).run()
            #expect(result.sha256 == digest?.hex)
            let listed = sources.withLock { $0 }
            #expect(listed.map(\.state) == [.ok, .ok, .excluded, .failed], "\(listed)")
            #expect(listed[0].bytes > 0 && listed[1].bytes > 0, "both agreeing sources brought bytes: \(listed)")
            #expect(listed.map(\.bytes).reduce(0, +) == Self.size)
            // The mirror's ranges went under its own validator.
            let mirrored = recorder.all.filter { $0.path.hasPrefix("/testdata/4M?seed=6&etag=m1") && $0.range != "bytes=0-0" }
            #expect(!mirrored.isEmpty && mirrored.allSatisfy { $0.ifRange == "\"m1\"" }, "\(mirrored.map(\.ifRange))")
        }
    }

    /// A mirror that answers its first two requests (the join and one range), then 503 to
    /// every other: given up on, its connections go on from the primary.
    @Test func aMirrorThatDiesHalfWayGivesItsConnectionsToThePrimary() async throws {
        let content = TestDataContent(seed: 7)
        let answered = Mutex(0)
        let router = Router()
        router.get("/mirror") { request, _ -> Response in
            let count = answered.withLock { count in
                count += 1
                return count
            }
            guard count <= 2, let value = request.headers[.range], case .fromTo(let start, let last)? = RangeHeader.parse(value)?.first
            else { return Response(status: .serviceUnavailable) }
            let end = min(Self.size - 1, last ?? Self.size - 1)
            return Response(
                status: .partialContent,
                headers: [.contentRange: "bytes \(start)-\(end)/\(Self.size)", .eTag: "\"mirror\"", .acceptRanges: "bytes"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: content.bytes(start..<(end + 1)))))
        }
        try await withRunningServer(router: router) { mirrorPort in
            try await EngineHarness.with { (harness: EngineHarness) async throws in
                let digest = Checksum(.sha256, hex: EngineHarness.expectedSHA256(size: Self.size, seed: 7))
                let sources = Mutex<[SourceState]>([])
                var options = DownloadOptions(
                    connections: 4, expectedChecksum: digest, retry: EngineHarness.quickRetry, minimumSplit: 256 << 10)
                options.mirrors = ["http://127.0.0.1:\(mirrorPort)/mirror"]
                options.progressInterval = 0.05
                let download = Download(
                    url: harness.url("/testdata/4M?seed=7"),
                    target: DownloadTarget(partialPath: harness.cache + "/job.part", destination: .directory(harness.documents)),
                    options: options, client: harness.client, checkpoints: harness.checkpoints())
                let reader = Task {
                    for await case .progress(let progress) in download.events {
                        if let listed = progress.sources { sources.withLock { $0 = listed } }
                    }
                }
                let result = try await download.run()
                await reader.value
                #expect(result.sha256 == digest?.hex)
                let listed = sources.withLock { $0 }
                #expect(listed.map(\.state) == [.ok, .failed] && listed[1].failures == 1, "\(listed)")
                #expect(listed.map(\.bytes).reduce(0, +) == Self.size)
            }
        }
    }

    @Test func aCorruptMirrorsBytesNeverMakeAPlacedFile() async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let digest = Checksum(.sha256, hex: EngineHarness.expectedSHA256(size: Self.size, seed: 8))
            let error = await #expect(throws: SluiceError.self) {
                _ = try await harness.download(
                    "/testdata/4M?seed=8", connections: 4, checksum: digest,
                    mirrors: ["/testdata/4M?seed=8&corrupt=\((0..<64).map { String($0 * 65536 + 7) }.joined(separator: ","))"]
                ).run()
            }
            #expect(error?.code == .checksumMismatch)
            #expect(try harness.documentNames().isEmpty)
        }
    }
}

/// RFC 6249 §6: a mirror a `Link: rel=duplicate` names joins only beside an instance digest.
@Suite struct LinkedMirrorTests {
    static func linked(_ path: String) -> String { path.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    @Test(arguments: [true, false])
    func aLinkedMirrorJoinsOnlyBesideAnInstanceDigest(withDigest: Bool) async throws {
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let mirror = harness.url("/testdata/4M?seed=9&etag=linked")
            let path = "/testdata/4M?seed=9&link=\(Self.linked(mirror))" + (withDigest ? "&digest=1" : "")
            if withDigest { try await harness.warmDigest(path) }
            let sources = Mutex<[SourceState]?>(nil)
            let result = try await harness.download(
                path, connections: 4, progress: { progress in if let listed = progress.sources { sources.withLock { $0 = listed } } }
            ).run()
            #expect(result.sha256 == EngineHarness.expectedSHA256(size: 4 << 20, seed: 9))
            let listed = sources.withLock { $0 }
            if withDigest {
                #expect(listed?.map(\.url) == [harness.url(path), mirror], "\(String(describing: listed))")
                #expect((listed?.last?.bytes ?? 0) > 0, "the linked mirror brought bytes")
            } else {
                #expect(listed == nil, "no mirror without an instance digest: \(String(describing: listed))")
            }
        }
    }
}
