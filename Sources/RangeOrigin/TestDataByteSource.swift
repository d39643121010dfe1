import Hummingbird
import Metrics
import NIOCore
import ServiceLifecycle
import SluiceCore

/// Generates test data chunk by chunk, paced to `rate` bytes per second and cut at the
/// given offsets: a fault cut ends the connection mid-body, as a crashed server would.
struct TestDataByteSource: ByteSource {
    struct ConnectionCut: Error {}

    static let chunkSize = 256 << 10

    let content: TestDataContent
    let size: Int64
    let rate: Int64?
    let cuts: [Int64]
    /// Offsets whose byte is flipped (`corrupt=`).
    var corrupt: [Int64] = []
    let bytesServed: Counter

    /// Fills `buffer` with the content from `offset`, corrupted where `corrupt` says.
    private func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int64) {
        content.fill(buffer, offset: offset)
        for flip in corrupt where flip >= offset && flip < offset + Int64(buffer.count) {
            buffer[Int(flip - offset)] ^= 0xFF
        }
    }

    func write(_ range: Range<Int64>, to writer: inout any ResponseBodyWriter) async throws {
        // A cut applies only after the request's first byte, so a resume past it succeeds.
        let cut = cuts.filter { $0 > range.lowerBound && $0 < range.upperBound }.min()
        let end = cut ?? range.upperBound
        let chunk = Int64(rate.map { max(1, min(Self.chunkSize, Int($0 / 20))) } ?? Self.chunkSize)
        let clock = ContinuousClock()
        let start = clock.now
        var offset = range.lowerBound
        while offset < end {
            let count = Int(min(chunk, end - offset))
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                fill(UnsafeMutableRawBufferPointer(rebasing: pointer[..<count]), offset: offset)
                return count
            }
            try await writer.write(buffer)
            // A stopping service does not wait for long bodies: the client resumes elsewhere.
            if Task.isShuttingDownGracefully { throw ShutdownInProgress() }
            bytesServed.increment(by: Int64(count))
            offset += Int64(count)
            if let rate {
                let sent = Double(offset - range.lowerBound)
                try await clock.sleep(until: start.advanced(by: .seconds(sent / Double(rate))))
            }
        }
        if cut != nil { throw ConnectionCut() }
    }

    func bytes(_ range: Range<Int64>) throws -> ByteBuffer? {
        guard rate == nil, !cuts.contains(where: { $0 > range.lowerBound && $0 < range.upperBound }) else { return nil }
        let count = Int(range.count)
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            fill(UnsafeMutableRawBufferPointer(rebasing: pointer[..<count]), offset: range.lowerBound)
            return count
        }
        bytesServed.increment(by: range.count)
        return buffer
    }

    func writeAll(to writer: inout any ResponseBodyWriter) async throws {
        try await write(0..<size, to: &writer)
    }
}
