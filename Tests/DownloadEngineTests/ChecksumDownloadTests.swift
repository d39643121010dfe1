import Crypto
import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// The engine checks a finished file against a digest of any of `checksum`'s algorithms
/// (CONTRACT.md §8), reading it again for one that is not SHA-256; a wrong one places nothing.
@Suite struct ChecksumDownloadTests {
    static let size: Int64 = 2 << 20

    @Test(arguments: [Checksum.Algorithm.sha512, .sha1, .md5])
    func aRightDigestPlacesTheFileAndAWrongOneFailsNamingIt(algorithm: Checksum.Algorithm) async throws {
        let data = Data(TestDataContent(seed: 3).bytes(0..<Self.size))
        // Computed here by swift-crypto itself, not by what is under test.
        let hex: String =
            switch algorithm {
            case .sha512: FileDigest.hex(SHA512.hash(data: data))
            case .sha1: FileDigest.hex(Insecure.SHA1.hash(data: data))
            case .md5: FileDigest.hex(Insecure.MD5.hash(data: data))
            case .sha256: FileDigest.hex(SHA256.hash(data: data))
            }
        try await EngineHarness.with { (harness: EngineHarness) async throws in
            let result = try await harness.download("/testdata/2M?seed=3", name: "right", checksum: Checksum(algorithm, hex: hex)).run()
            #expect(try Data(contentsOf: URL(fileURLWithPath: result.path)) == data)
            let wrong = Checksum(algorithm, hex: String(repeating: "0", count: algorithm.hexLength))
            let error = await #expect(throws: SluiceError.self) {
                _ = try await harness.download("/testdata/2M?seed=3", name: "wrong", checksum: wrong).run()
            }
            #expect(error?.code == .checksumMismatch)
            #expect(error?.message == "\(algorithm.displayName) is \(hex), expected \(wrong!.hex)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: harness.documents).count == 1, "only the right one placed")
        }
    }
}
