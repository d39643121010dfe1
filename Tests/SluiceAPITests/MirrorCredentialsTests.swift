import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// A job's credentials go to its own URL's origin only (second reading of issue 39): not to
/// a mirror it fails over to, nor to a checksum file elsewhere, which gets its own
/// `user:pass@` and nothing of the job's. And a dead primary does not fail a job with a
/// digest while a mirror serves the file.
@Suite struct MirrorCredentialsTests {
    /// A server on 127.0.0.2 (another origin than the service's 127.0.0.1) that records what
    /// credentials each request carried: `/file` (1000 bytes of seed 4) and `/SUMS`.
    final class Seen: Sendable {
        let lines = Mutex<[String]>([])
    }

    static func withRecordingServer(_ body: @Sendable (Int, Seen) async throws -> Void) async throws {
        let seen = Seen()
        let content = TestDataContent(seed: 4).bytes(0..<1000)
        let router = Router()
        for path in ["/file", "/SUMS"] {
            router.get(RouterPath(path)) { request, _ -> Response in
                let line = "\(path) auth=\(request.headers[.authorization] ?? "-") cookie=\(request.headers[.cookie] ?? "-")"
                seen.lines.withLock { $0.append(line) }
                let bytes: [UInt8] =
                    path == "/file" ? content : Array("\(FileDigest.hex(SHA256.hash(data: content)))  file\n".utf8)
                return Response(
                    status: .ok, headers: [.contentLength: String(bytes.count)], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
        try await withRunningServer(router: router, host: "127.0.0.2") { port in try await body(port, seen) }
    }

    @Test func aMirrorAndAChecksumFileElsewhereGetNoneOfTheJobsCredentials() async throws {
        try await Self.withRecordingServer { port, seen in
            try await ServiceHarness.with { (service: ServiceHarness) async throws in
                let id =
                    try await service.create([
                        "url": service.testdata("/testdata/1000?status=404"), "headers": ["Authorization": "Bearer T", "Cookie": "s=1"],
                        "mirrors": ["http://127.0.0.2:\(port)/file"], "checksumUrl": "http://u:p@127.0.0.2:\(port)/SUMS",
                        "checksumName": "file",
                    ])["id"] as! String
                let done = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
                #expect(done["state"] as? String == "completed", "\(done)")
                let lines = seen.lines.withLock { $0 }
                #expect(lines.contains("/SUMS auth=Basic dTpw cookie=-"), "\(lines)")
                // Read once for the run, not again for the mirror the run fell back to.
                #expect(lines.filter { $0.hasPrefix("/SUMS") }.count == 1, "\(lines)")
                #expect(lines.filter { $0.hasPrefix("/file") }.allSatisfy { $0 == "/file auth=- cookie=-" }, "\(lines)")
            }
        }
    }

    @Test func aDeadPrimaryDoesNotFailAJobWithADigestWhileAMirrorServes() async throws {
        try await Self.withRecordingServer { port, _ in
            try await ServiceHarness.with { (service: ServiceHarness) async throws in
                let digest = FileDigest.hex(SHA256.hash(data: TestDataContent(seed: 4).bytes(0..<1000)))
                let id =
                    try await service.create([
                        "url": service.testdata("/testdata/1000?status=404"), "mirrors": ["http://127.0.0.2:\(port)/file"],
                        "checksum": "sha-256=\(digest)",
                    ])["id"] as! String
                let done = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
                #expect(done["state"] as? String == "completed", "\(done)")
                let sources = done["sources"] as? [[String: Any]]
                #expect(sources?.map { $0["state"] as? String } == ["failed", "ok"], "\(done)")
            }
        }
    }
}
