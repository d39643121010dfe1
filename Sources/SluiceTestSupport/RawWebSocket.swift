import SluiceSystem
import Foundation

/// The smallest WebSocket client (RFC 6455) a test needs: the upgrade, text frames out
/// (masked, as a client must), text frames in. Blocking reads run on a thread of their own.
public final class RawWebSocket: @unchecked Sendable {
    private let descriptor: Int32
    private var pending: [UInt8] = []

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Connects to 127.0.0.1:`port` and upgrades `path`; throws unless the answer is 101.
    public static func open(port: Int, path: String, headers: [String: String] = [:]) async throws -> RawWebSocket {
        let descriptor = try await onThread { try connectLoopback(port: port) }
        return try await open(descriptor: descriptor, host: "127.0.0.1:\(port)", path: path, headers: headers)
    }

    /// Upgrades `path` over a connected stream `descriptor` (taken over: closed with the
    /// socket), such as one end of a socket pair whose other end is `openssl s_client`'s
    /// standard input and output: a WebSocket over TLS without a TLS library here.
    public static func open(descriptor: Int32, host: String, path: String, headers: [String: String] = [:]) async throws
        -> RawWebSocket
    {
        try await onThread {
            let socket = RawWebSocket(descriptor: descriptor)
            var request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            for (name, value) in headers { request += "\(name): \(value)\r\n" }
            try socket.send(Array((request + "\r\n").utf8))
            var head: [UInt8] = []
            while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
                head.append(try socket.byte(deadline: Date().addingTimeInterval(10)))
            }
            let status = String(decoding: head, as: UTF8.self).split(separator: " ").dropFirst().first
            guard status == "101" else { throw RawHTTPClient.Failure(description: "the upgrade answered \(status ?? "nothing")") }
            return socket
        }
    }

    public func send(text: String) async throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65_536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        // A mask of zeros leaves the payload as it is; a server must accept any key.
        frame += [0, 0, 0, 0] + payload
        let bytes = frame
        try await Self.onThread { try self.send(bytes) }
    }

    /// The next text message within `timeout` seconds; nil when none came. Pings and other
    /// control frames are skipped.
    public func nextText(timeout: Double = 30) async throws -> String? {
        try await Self.onThread {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                guard let first = try? self.byte(deadline: deadline) else { return nil }
                let second = try self.byte(deadline: deadline)
                var length = UInt64(second & 0x7F)
                if length == 126 {
                    length = try (0..<2).reduce(0) { value, _ in value << 8 | UInt64(try self.byte(deadline: deadline)) }
                } else if length == 127 {
                    length = try (0..<8).reduce(0) { value, _ in value << 8 | UInt64(try self.byte(deadline: deadline)) }
                }
                guard length < 16 << 20 else { throw RawHTTPClient.Failure(description: "a frame of \(length) bytes") }
                var payload: [UInt8] = []
                for _ in 0..<length { payload.append(try self.byte(deadline: deadline)) }
                if first & 0x0F == 1 { return String(decoding: payload, as: UTF8.self) }
                if first & 0x0F == 8 { return nil }
            }
        }
    }

    private func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard result > 0 else { throw RawHTTPClient.Failure(description: "send: \(String(cString: strerror(errno)))") }
            sent += result
        }
    }

    private func byte(deadline: Date) throws -> UInt8 {
        if pending.isEmpty {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                guard Date() < deadline else { throw RawHTTPClient.Failure(description: "timed out") }
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 50) > 0 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { throw RawHTTPClient.Failure(description: "closed") }
                pending = Array(buffer[0..<count])
                break
            }
        }
        return pending.removeFirst()
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
