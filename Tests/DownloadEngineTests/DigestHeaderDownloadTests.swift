import Crypto
import DownloadEngine
import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// Digest headers on a download (CONTRACT.md §8): without a digest of its own, the job takes
/// the strongest a header announces and checks the file against it, naming the header when
/// it fails; with one, a header of the same algorithm that disagrees fails it before a byte
/// is written.
@Suite struct DigestHeaderDownloadTests {
    static let body = Array(TestDataContent(seed: 41).bytes(0..<200_000))
    static func base64(_ digest: some Sequence<UInt8>) -> String { Data(digest).base64EncodedString() }
    static let md5 = base64(Insecure.MD5.hash(data: body))
    static let sha256 = base64(SHA256.hash(data: body))
    static let wrongMD5 = base64([UInt8](repeating: 1, count: 16))
    static let wrongSHA256 = base64([UInt8](repeating: 2, count: 32))

    /// A server answering `/h?name=value` with the body (200, no ranges) and that header.
    static func withServer(_ body: @Sendable (Int) async throws -> Void) async throws {
        let router = Router()
        router.get("/h") { request, _ -> Response in
            var headers: HTTPFields = [.contentType: "application/octet-stream"]
            for (name, value) in request.uri.queryParameters {
                if let field = HTTPField.Name(String(name)) { headers.append(HTTPField(name: field, value: String(value))) }
            }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: Self.body)))
        }
        try await withRunningServer(router: router, body)
    }

    static func query(_ name: String, _ value: String) -> String {
        "/h?\(name)=" + value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    func download(port: Int, _ path: String, in directory: TemporaryDirectory, name: String, checksum: Checksum? = nil) async throws
        -> (DownloadResult, IntegrityFinding?)
    {
        try FileManager.default.createDirectory(atPath: directory.path + "/documents", withIntermediateDirectories: true)
        let client = Fetcher(stallTimeout: 5)
        defer { Task { try? await client.shutdown() } }
        let found = Mutex<IntegrityFinding?>(nil)
        var options = DownloadOptions(connections: 1, expectedChecksum: checksum, retry: EngineHarness.quickRetry)
        options.progressInterval = 0.05
        let download = Download(
            url: "http://127.0.0.1:\(port)\(path)",
            target: DownloadTarget(partialPath: directory.path + "/\(name).part", destination: .directory(directory.path + "/documents")),
            options: options, client: client, checkpoints: JSONFileCheckpointStore(path: directory.path + "/\(name).json")
        )
        let reader = Task {
            for await case .progress(let progress) in download.events { if let i = progress.integrity { found.withLock { $0 = i } } }
        }
        defer { reader.cancel() }
        let result = try await download.run()
        await reader.value
        return (result, found.withLock { $0 })
    }

    @Test(arguments: [
        ("Digest", "MD5=\(md5), SHA-256=\(sha256)", "digest", Checksum.Algorithm.sha256),
        ("Content-MD5", md5, "content-md5", .md5), ("x-goog-hash", "crc32c=AAAAAA==,md5=\(md5)", "x-goog-hash", .md5),
        ("x-amz-checksum-sha256", sha256, "x-amz-checksum-sha256", .sha256),
    ])
    func aRightHeaderIsTheExpectedDigest(name: String, value: String, source: String, algorithm: Checksum.Algorithm) async throws {
        try await withTemporaryDirectory { directory in
            try await Self.withServer { port in
                let (result, finding) = try await download(port: port, Self.query(name, value), in: directory, name: source)
                #expect(result.bytes == Int64(Self.body.count))
                #expect(finding?.source == source && finding?.expected?.algorithm == algorithm, "\(String(describing: finding))")
            }
        }
    }

    @Test func aWrongHeaderFailsTheFileNamingTheHeader() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.withServer { port in
                let error = await #expect(throws: SluiceError.self) {
                    _ = try await download(port: port, Self.query("Content-MD5", Self.wrongMD5), in: directory, name: "wrong")
                }
                #expect(error?.code == .checksumMismatch)
                #expect(error?.message.hasSuffix("but the remote's Content-MD5 announced 01010101010101010101010101010101") == true)
                #expect(!FileManager.default.fileExists(atPath: directory.path + "/documents/h"))
            }
        }
    }

    @Test func aHeaderThatDisagreesWithTheGivenDigestFailsBeforeAByteIsWritten() async throws {
        try await withTemporaryDirectory { directory in
            try await Self.withServer { port in
                let given = Checksum(.sha256, hex: FileDigest.hex(SHA256.hash(data: Self.body)))
                let error = await #expect(throws: SluiceError.self) {
                    _ = try await download(
                        port: port, Self.query("x-amz-checksum-sha256", Self.wrongSHA256), in: directory, name: "given", checksum: given)
                }
                #expect(error?.code == .checksumMismatch)
                #expect(error?.message.hasPrefix("the remote's x-amz-checksum-sha256 header announces SHA-256 0202") == true)
                let partial = (try? FileManager.default.attributesOfItem(atPath: directory.path + "/given.part")[.size] as? Int) ?? 0
                #expect(partial == 0, "nothing written")
                // Another algorithm cannot be compared: the given digest decides.
                let (result, _) = try await download(
                    port: port, Self.query("Content-MD5", Self.wrongMD5), in: directory, name: "other", checksum: given)
                #expect(result.sha256 == given?.hex)
            }
        }
    }
}
