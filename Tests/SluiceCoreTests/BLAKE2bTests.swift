import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// BLAKE2b-512, which minisign's prehashed signatures sign: RFC 7693's own example, and
/// coreutils' `b2sum` on lengths around the 128-byte block.
@Suite struct BLAKE2bTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func theRFCsExample() {
        #expect(
            Self.hex(BLAKE2b.hash(Array("abc".utf8)))
                == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/b2sum"), "coreutils' b2sum is missing"))
    func whatB2sumSaysForLengthsAroundABlock() async throws {
        try await withTemporaryDirectory { directory in
            for length in [0, 1, 127, 128, 129, 255, 256, 1000, (1 << 20) + 3] {
                let bytes = TestDataContent(seed: UInt64(length)).bytes(0..<Int64(length))
                let path = directory.path + "/\(length)"
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                let result = try Spawned.run("/usr/bin/b2sum", [path])
                let expected = String(decoding: result.stdout, as: UTF8.self).split(separator: " ").first.map(String.init)
                // In pieces of uneven sizes too: the block boundary is the hasher's to keep.
                var hasher = BLAKE2b()
                var offset = 0
                for piece in [1, 200, 7, 4096].cycled(while: { offset < bytes.count }) {
                    let end = min(bytes.count, offset + piece)
                    hasher.update(bytes[offset..<end])
                    offset = end
                }
                #expect(Self.hex(BLAKE2b.hash(bytes)) == expected, "\(length) bytes")
                #expect(Self.hex(hasher.finalize()) == expected, "\(length) bytes in pieces")
            }
        }
    }
}

extension Array {
    /// The elements again and again while `condition` holds.
    fileprivate func cycled(while condition: @escaping () -> Bool) -> AnySequence<Element> {
        var index = 0
        return AnySequence(
            AnyIterator {
                guard !isEmpty, condition() else { return nil }
                defer { index = (index + 1) % count }
                return self[index]
            })
    }
}
