@testable import DownloadEngine
import Foundation
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing

/// Every read of a finished file (another algorithm's digest, a signature's BLAKE2b, a legacy
/// signature's bytes) goes through one fold on the hashing pool, which a pause stops between
/// two megabytes instead of after the whole file.
@Suite struct FileFoldTests {
    @Test func aFoldGivesWhatTheFileHoldsAndACancelledOneStopsPartWay() async throws {
        try await withTemporaryDirectory { directory in
            let file = try PartialFile(path: directory.path + "/big.part")
            let megabyte = [UInt8](repeating: 7, count: 1 << 20)
            for index in 0..<64 { try megabyte.withUnsafeBytes { try file.write($0, at: Int64(index) << 20) } }
            let bytes = try await FileDigests.fold(file, length: 3 << 19, start: { [UInt8]() }, update: { $0 += $1 }, finish: { $0 })
            #expect(bytes == [UInt8](repeating: 7, count: 3 << 19))
            // Slowed to a piece every 20 ms: 64 pieces would take over a second; cancelled at
            // once, it reads a few.
            let pieces = Mutex(0)
            let fold = Task {
                try await FileDigests.fold(
                    file, length: 64 << 20, start: { 0 },
                    update: { count, _ in
                        pieces.withLock { $0 += 1 }
                        Thread.sleep(forTimeInterval: 0.02)
                        count += 1
                    }, finish: { $0 })
            }
            try await Task.sleep(for: .milliseconds(50))
            fold.cancel()
            await #expect(throws: CancellationError.self) { _ = try await fold.value }
            #expect(pieces.withLock { $0 } < 64, "stopped part way")
        }
    }
}
