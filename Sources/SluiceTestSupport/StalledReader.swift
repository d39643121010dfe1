import SluiceSystem
import Foundation

/// A client that sends one request, reads the answer up to `until`, then reads nothing more
/// with a small receive buffer, so that what the server sends backs up: an event-stream
/// client that stopped reading.
public final class StalledReader: @unchecked Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Connects, sends `request` and reads up to `marker`, on a thread of its own (a test's
    /// task must not block the cooperative pool the server in the same process runs on).
    public static func open(port: Int, request: String, until marker: String, timeout: Double = 10) async throws -> StalledReader {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try blockingOpen(port: port, request: request, until: marker, timeout: timeout) })
            }.start()
        }
    }

    private static func blockingOpen(port: Int, request: String, until marker: String, timeout: Double) throws -> StalledReader {
        let fd = try connectLoopback(port: port) { fd in
            var small: Int32 = 4096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        }
        let reader = StalledReader(descriptor: fd)
        _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = Date().addingTimeInterval(timeout)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            guard Date() < deadline else { throw RawHTTPClient.Failure(description: "no \(marker.debugDescription) within \(timeout) s") }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { throw RawHTTPClient.Failure(description: "closed before \(marker.debugDescription)") }
            received += buffer[0..<count]
        }
        return reader
    }

    deinit { close(descriptor) }

    /// Whether the server ended the connection (a reset, or a close the client is told of
    /// without reading what is still queued) within `timeout` seconds. Reads nothing.
    public func endedByServer(within timeout: Double) async -> Bool {
        let fd = descriptor
        let peerHungUp: Int16 = 0x2000  // POLLRDHUP (Linux), which Glibc's module does not export
        return await withCheckedContinuation { continuation in
            Thread {
                let deadline = Date().addingTimeInterval(timeout)
                while Date() < deadline {
                    var entry = pollfd(fd: fd, events: peerHungUp, revents: 0)
                    if poll(&entry, 1, 50) > 0, entry.revents & (peerHungUp | Int16(POLLHUP | POLLERR)) != 0 {
                        continuation.resume(returning: true)
                        return
                    }
                }
                continuation.resume(returning: false)
            }.start()
        }
    }
}
