import SluiceSystem
import Foundation

/// One HTTP/1.1 exchange over a plain socket, with the request sent byte for byte as
/// written: no client library normalises paths, adds headers or hides a cut connection.
public struct RawHTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// True when the connection closed before the announced body was complete.
    public var truncated: Bool

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of a header.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
}

public enum RawHTTPClient {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Sends `GET path` (or another method) with the given header lines and
    /// `Connection: close`, and reads the answer to the end.
    public static func request(
        port: Int, method: String = "GET", path: String, host: String? = nil, headers: [String: String] = [:],
        body: String? = nil
    ) async throws -> RawHTTPResponse {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n" + (body ?? "")
        let raw = try await exchange(port: port, request: Array(text.utf8))
        return try parse(raw, isHead: method == "HEAD")
    }

    /// Sends raw bytes and returns every byte received until the server closes.
    /// Runs on its own thread so that blocking reads never occupy the cooperative pool.
    /// `midway`, when given, runs once `midway.after` bytes have arrived, before the rest
    /// is read (to change something on the server while it is sending).
    /// `halfClose` shuts the sending side once the request is out, as `nc -N` does.
    public static func exchange(
        port: Int, request: [UInt8], timeout: Double = 30,
        midway: (after: Int, action: @Sendable () throws -> Void)? = nil, halfClose: Bool = false
    ) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        try blockingExchange(port: port, request: request, timeout: timeout, midway: midway, halfClose: halfClose)
                    }
                )
            }
            thread.start()
        }
    }

    private static func blockingExchange(
        port: Int, request: [UInt8], timeout: Double, midway: (after: Int, action: @Sendable () throws -> Void)?,
        halfClose: Bool
    ) throws -> [UInt8] {
        var midway = midway
        let fd = try connectLoopback(port: port) { fd in
            var seconds = timeval(tv_sec: Int(timeout), tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        }
        defer { close(fd) }
        var sent = 0
        while sent < request.count {
            let result = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard result > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += result
        }
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[..<count])
                if let pending = midway, received.count >= pending.after {
                    midway = nil
                    try pending.action()
                }
            } else if count == 0 || errno == ECONNRESET {
                return received
            } else if errno != EINTR {
                throw Failure(description: "recv: errno \(errno) after \(received.count) bytes")
            }
        }
    }

    /// Parses a complete HTTP/1.1 response read until close.
    public static func parse(_ raw: [UInt8], isHead: Bool) throws -> RawHTTPResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = raw.firstRange(of: separator) else {
            throw Failure(description: "no complete response head in \(raw.count) bytes")
        }
        let headText = String(decoding: raw[..<headEnd.lowerBound], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = RawHTTPResponse(status: status, headers: headers, body: [], truncated: false)
        let rest = Array(raw[headEnd.upperBound...])
        if isHead || status == 304 || status == 204 || (100..<200).contains(status) {
            response.body = rest
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            (response.body, response.truncated) = decodeChunked(rest)
        } else if let length = response.header("Content-Length").flatMap(Int.init) {
            response.body = Array(rest.prefix(length))
            response.truncated = rest.count < length
        } else {
            response.body = rest
        }
        return response
    }

    private static func decodeChunked(_ data: [UInt8]) -> ([UInt8], truncated: Bool) {
        var body: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = data[index...].firstRange(of: [13, 10]) else { return (body, true) }
            let sizeText = String(decoding: data[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else { return (body, true) }
            index = lineEnd.upperBound
            if size == 0 { return (body, false) }
            guard index + size <= data.count else {
                body.append(contentsOf: data[index...])
                return (body, true)
            }
            body.append(contentsOf: data[index..<(index + size)])
            index += size + 2
        }
    }
}
