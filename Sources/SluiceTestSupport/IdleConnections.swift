import SluiceSystem
import Foundation

/// Plain TCP connections to a local port, held open and idle (or with half a request
/// head sent), to test how a server treats connections that hold a slot without using it.
public final class IdleConnections: @unchecked Sendable {
    public private(set) var descriptors: [Int32] = []

    public init() {}

    deinit { closeAll() }

    /// Opens `count` connections to 127.0.0.1:`port`, sending `prefix` on each.
    public func open(_ count: Int, port: Int, sending prefix: String = "") throws {
        for _ in 0..<count {
            let fd = try connectLoopback(port: port)
            if !prefix.isEmpty { _ = prefix.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }
            descriptors.append(fd)
        }
    }

    /// How many of the connections the server has closed (end of stream or reset) within
    /// `timeout` seconds, waiting on a thread of its own.
    public func closedByServer(within timeout: Double) async -> Int {
        let descriptors = descriptors
        return await withCheckedContinuation { continuation in
            Thread {
                let deadline = Date().addingTimeInterval(timeout)
                var open = Set(descriptors)
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !open.isEmpty, Date() < deadline {
                    var polls = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                    let ready = poll(&polls, nfds_t(polls.count), 50)
                    guard ready > 0 else { continue }
                    for entry in polls where entry.revents != 0 {
                        let count = recv(entry.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { open.remove(entry.fd) }
                    }
                }
                continuation.resume(returning: descriptors.count - open.count)
            }.start()
        }
    }

    public func closeAll() {
        for fd in descriptors { close(fd) }
        descriptors = []
    }
}
