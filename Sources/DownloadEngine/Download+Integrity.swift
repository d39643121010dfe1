import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SluiceCore

/// CONTRACT.md §8 before the file's first byte: the digest a checksum file gives the file,
/// read once per job (the job keeps what a run learnt, and its next run is given it as
/// `expectedChecksum`).
extension Download {
    /// The digest the finished file must have: the one the job was given, else the one
    /// this run read from its checksum file.
    var expectedChecksum: Checksum? { options.expectedChecksum ?? state.integrity?.expected }

    /// Reads the checksum file when the job has one and no digest yet, and reports what it
    /// gives; `checksum_unavailable` when it cannot be fetched or has no entry for the file.
    func resolveIntegrity() async throws {
        guard options.expectedChecksum == nil, let sources = options.integritySources, let checksumURL = sources.checksumURL
        else { return }
        let name = sources.checksumName ?? Self.remoteName(of: url)
        let bytes = try await fetchDocument(checksumURL, limit: ChecksumFile.maximumBytes, what: "the checksum file")
        let expected = try ChecksumFile(parsing: bytes).checksum(for: name ?? "")
        state.setIntegrity(IntegrityFinding(expected: expected, source: JobIntegrity.ExpectedSource.checksumURL))
        logger.info("the checksum file gives \(expected)", metadata: ["url": "\(url)"])
        reporter.yield(.progress(currentProgress()))
    }

    /// The last path segment of `url`, percent-decoded: the name a checksum file lists the
    /// file under. Nil when the path ends in `/`.
    static func remoteName(of url: String) -> String? {
        guard let path = URLComponents(string: url)?.percentEncodedPath, let last = path.split(separator: "/").last,
            !path.hasSuffix("/")
        else { return nil }
        return String(last).removingPercentEncoding ?? String(last)
    }

    /// A small document named beside the file (a checksum file, a signature): fetched as
    /// the file's requests are (redirects, proxy, TLS, the job's headers with credentials
    /// for the file's origin only, or the document URL's own), retried as they are, at most
    /// `limit` bytes. Whatever keeps it from being read fails `checksum_unavailable` (or
    /// `code`), naming `what`.
    func fetchDocument(
        _ documentURL: String, limit: Int, what: String, code: SluiceError.Code = .checksumUnavailable
    ) async throws -> [UInt8] {
        let (plain, authorization) = URLCredentials.split(documentURL)
        let shown = URLCredentials.redacted(documentURL)
        var machine = RetryMachine(policy: options.retry)
        while true {
            let event: RetryMachine.Event
            do {
                var request = HTTPClientRequest(url: plain)
                request.headers.add(name: "User-Agent", value: "sluice/0.1")
                for (name, value) in options.headers { request.headers.replaceOrAdd(name: name, value: value) }
                if let authorization { request.headers.replaceOrAdd(name: "Authorization", value: authorization) }
                let fetched = try await client.execute(
                    request, credentialsOrigin: authorization == nil ? url : plain,
                    deadline: .now() + .seconds(Int64(options.stallTimeout) + 10), logger: logger, proxy: options.proxy,
                    insecure: options.insecure
                )
                let response = fetched.response
                let status = Int(response.status.code)
                switch StatusDisposition(status: status) {
                case .success:
                    if let length = response.headers.first(name: "Content-Length").flatMap(Int64.init), length > Int64(limit) {
                        throw SluiceError(code, "\(what) \(shown) is larger than \(limit) bytes")
                    }
                    do {
                        let body = try await response.body.collect(upTo: limit)
                        return Array(body.readableBytesView)
                    } catch is NIOTooManyBytesError {
                        throw SluiceError(code, "\(what) \(shown) is larger than \(limit) bytes")
                    }
                case .transient:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    let retryAfter = response.headers.first(name: "Retry-After").flatMap { Double($0) }
                    event = .transient(SluiceError(.httpStatus, "HTTP \(status)"), retryAfter: retryAfter)
                case .fatal:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    event = .final(SluiceError(.httpStatus, "HTTP \(status)"))
                }
            } catch let error as SluiceError where error.code == code {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                switch SluiceError.fromTransport(error, target: URLOrigin(plain).map { "\($0.host):\($0.port)" } ?? plain) {
                case .success(let transient): event = .transient(transient.error, retryAfter: transient.retryAfter)
                case .failure(let final): event = .final(final)
                }
            }
            switch machine.handle(event, jitter: Double.random(in: 0...1)) {
            case .retry(let delay):
                try await options.clock.sleep(delay)
            case .fail(let error):
                throw SluiceError(code, "\(what) \(shown) could not be fetched: \(error.message)", cause: error)
            default:
                throw SluiceError(code, "\(what) \(shown) could not be fetched")
            }
        }
    }
}
