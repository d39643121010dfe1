import SluiceSystem

/// A TCP socket connected to 127.0.0.1:`port`, for tests that drive a server byte by byte.
/// `configure` runs before `connect` (socket options such as a small receive buffer).
/// The caller closes the descriptor.
public func connectLoopback(port: Int, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw RawHTTPClient.Failure(description: "socket: \(String(cString: strerror(errno)))") }
    configure(fd)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw RawHTTPClient.Failure(description: "connect: \(reason)")
    }
    return fd
}
