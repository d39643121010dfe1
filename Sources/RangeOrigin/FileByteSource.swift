import SluiceSystem
import Hummingbird
import Metrics
import NIOCore
import ServiceLifecycle
import SluiceCore

/// Reads a file in chunks with `pread` and hands each chunk to the response writer,
/// which awaits the socket: memory stays at one chunk per response whatever the file size.
struct FileByteSource: ByteSource {
    static let chunkSize = 1 << 20

    let file: OpenFile
    let bytesServed: Counter

    func bytes(_ range: Range<Int64>) throws -> ByteBuffer? {
        var buffer = ByteBufferAllocator().buffer(capacity: Int(range.count))
        try read(range.lowerBound, count: Int(range.count), into: &buffer)
        bytesServed.increment(by: range.count)
        return buffer
    }

    func write(_ range: Range<Int64>, to writer: inout any ResponseBodyWriter) async throws {
        var offset = range.lowerBound
        // One buffer, cleared for each chunk: once the socket has taken the previous chunk
        // the storage is reused; while it still holds it, clearing copies on write.
        var buffer = ByteBufferAllocator().buffer(capacity: Int(min(Int64(Self.chunkSize), range.upperBound - range.lowerBound)))
        while offset < range.upperBound {
            let count = Int(min(Int64(Self.chunkSize), range.upperBound - offset))
            buffer.clear()
            try read(offset, count: count, into: &buffer)
            try await writer.write(buffer)
            // A stopping service does not wait for long bodies: the client resumes elsewhere.
            if Task.isShuttingDownGracefully { throw ShutdownInProgress() }
            bytesServed.increment(by: Int64(count))
            offset += Int64(count)
        }
    }

    private func read(_ offset: Int64, count: Int, into buffer: inout ByteBuffer) throws {
        let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            try Self.readFully(file.descriptor, into: UnsafeMutableRawBufferPointer(rebasing: pointer[..<count]), at: offset)
        }
        guard read == count else {
            // The file shrank while being served: end the connection rather than pad.
            throw SluiceError(.io, "file changed while being served")
        }
    }

    /// Reads until the buffer is full or the file ends; returns the bytes read.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let result = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if result > 0 {
                done += result
            } else if result == 0 {
                break
            } else if errno != EINTR {
                throw SluiceError(.io, "read failed: errno \(errno)")
            }
        }
        return done
    }
}
