#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// A client that sends one request, reads the answer up to `until`, then reads nothing more
/// with a small receive buffer, so that what the server sends backs up: an event-stream
/// client that stopped reading.
public final class StalledReader: @unchecked Sendable {
    private let descriptor: Int32

    public init(port: Int, request: String, until marker: String, timeout: Double = 10) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPClient.Failure(description: "socket: \(String(cString: strerror(errno)))") }
        descriptor = fd
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RawHTTPClient.Failure(description: "connect: \(String(cString: strerror(errno)))") }
        _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = Date().addingTimeInterval(timeout)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            guard Date() < deadline else { throw RawHTTPClient.Failure(description: "no \(marker.debugDescription) within \(timeout) s") }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            // A byte at a time past the head would be slow; the marker ends the first write.
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { throw RawHTTPClient.Failure(description: "closed before \(marker.debugDescription)") }
            received += buffer[0..<count]
        }
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
