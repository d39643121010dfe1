import AsyncHTTPClient
import Crypto
import NIOCore
import SluiceCore
import NIOHTTP1

extension Download {
    /// One connection for a server without ranges (or without a length): the body is
    /// written from byte 0 and hashed as it streams; a failure starts over from 0.
    func streamWhole(file: PartialFile, first: HTTPClientResponse, total: Int64?) async throws -> String {
        var response: HTTPClientResponse? = first
        var machine = RetryMachine(policy: options.retry, failures: options.priorFailures)
        var best: Int64 = 0
        while true {
            var offset: Int64 = 0
            do {
                if response == nil {
                    let whole = try await fetchWhole()
                    // Without a validator this may be another version of the file: check
                    // against what this answer announces, not what the probe's did.
                    state.setAnnouncedSHA256(Self.announcedSHA256(whole))
                    try checkAnnouncedDigests(whole, wholeBody: true, fresh: true)
                    response = whole
                }
                let body = response!.body
                response = nil
                try file.truncate()
                state.streamedBytes(0)
                var hasher = SHA256()
                state.connectionOpened()
                defer { state.connectionClosed() }
                var watch = makeStallWatch()
                let started = options.clock.elapsed()
                for try await buffer in body {
                    try check(&watch, received: buffer.readableBytes, since: started)
                    try buffer.withUnsafeReadableBytes { bytes in
                        try file.write(bytes, at: offset)
                        hasher.update(bufferPointer: bytes)
                    }
                    offset += Int64(buffer.readableBytes)
                    state.streamedBytes(offset)
                    try await options.rateLimiter?.consume(buffer.readableBytes)
                    if let total, offset > total {
                        throw TransientFailure(error: SluiceError(.invalidResponse, "the body is longer than its Content-Length"))
                    }
                }
                if let total, offset != total {
                    throw TransientFailure(error: SluiceError(.network, "the connection closed after \(offset) of \(total) bytes"))
                }
                return FileDigest.hex(hasher.finalize())
            } catch {
                response = nil
                if offset > best, !(error is StallFailure) {
                    best = offset
                    _ = machine.handle(.progressed, jitter: 0)
                }
                try await recover(from: error, with: &machine)
            }
        }
    }

    /// A plain `GET` that must answer 200.
    private func fetchWhole() async throws -> HTTPClientResponse {
        let response = try await execute(makeRequest(url: url, range: nil, ifRange: nil)).response
        let status = Int(response.status.code)
        switch StatusDisposition(status: status) {
        case .success where status == 200:
            return response
        case .transient:
            let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
            throw TransientFailure(error: SluiceError(.httpStatus, "the server answered HTTP \(status)"), retryAfter: retryAfter)
        default:
            throw SluiceError(.httpStatus, "the server answered HTTP \(status)")
        }
    }
}
