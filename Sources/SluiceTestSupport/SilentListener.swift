import SluiceSystem

/// A TCP port on 127.0.0.1 that takes connections (the kernel completes them into its
/// backlog) and never answers a byte: a webhook receiver that hangs every call until the
/// caller's timeout.
public final class SilentListener: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPClient.Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 1024) == 0 else {
            close(fd)
            throw RawHTTPClient.Failure(description: "bind or listen: \(String(cString: strerror(errno)))")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
