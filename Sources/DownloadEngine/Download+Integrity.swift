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

    /// Reads the checksum file when the job has one and no digest yet, checking its
    /// signature first when it has one, and reports what it gives: `checksum_unavailable`
    /// when it cannot be fetched or has no entry for the file, `signature_unavailable` or
    /// `signature_invalid` for its signature. A signature of the file itself is fetched now
    /// (the file waits for it) and checked before the file is placed.
    func resolveIntegrity() async throws {
        guard let sources = options.integritySources else { return }
        if options.expectedChecksum == nil, let checksumURL = sources.checksumURL {
            let bytes = try await fetchDocument(checksumURL, limit: ChecksumFile.maximumBytes, what: "the checksum file")
            if let signatureURL = sources.signatureURL {
                try await checkSignature(at: signatureURL, of: .bytes(bytes), what: "the checksum file", keys: sources.keys)
            }
            let name = sources.checksumName ?? Self.remoteName(of: url)
            let expected = try ChecksumFile(parsing: bytes).checksum(for: name ?? "")
            var finding = state.integrity ?? IntegrityFinding()
            finding.expected = expected
            finding.source = JobIntegrity.ExpectedSource.checksumURL
            report(finding)
            logger.info("the checksum file gives \(expected)", metadata: ["url": "\(url)"])
        } else if let signatureURL = sources.signatureURL, sources.checksumURL == nil {
            state.setFileSignature(try await fetchSignature(signatureURL))
        }
    }

    /// Checks the file's own signature, fetched before its first byte, on the finished file.
    func checkFileSignature(file: PartialFile, length: Int64) async throws {
        guard let signature = state.fileSignature, let sources = options.integritySources else { return }
        try await checkSignature(signature, of: .file(file, length: length), what: "the file", keys: sources.keys)
    }

    private func fetchSignature(_ signatureURL: String) async throws -> [UInt8] {
        try await fetchDocument(signatureURL, limit: Minisign.Signature.maximumBytes, what: "the signature", code: .signatureUnavailable)
    }

    private func checkSignature(at signatureURL: String, of signed: SignatureVerifier.Signed, what: String, keys: TrustedKeys?)
        async throws
    {
        try await checkSignature(try await fetchSignature(signatureURL), of: signed, what: what, keys: keys)
    }

    /// Reports the check, and fails `signature_invalid` when no trusted key verified it.
    private func checkSignature(_ signature: [UInt8], of signed: SignatureVerifier.Signed, what: String, keys: TrustedKeys?)
        async throws
    {
        guard let keys, !keys.isEmpty else {
            throw SluiceError(.signatureInvalid, "the service has no trusted keys to check \(what)'s signature (serve --trusted-keys DIR)")
        }
        let check = try await SignatureVerifier.check(signature, of: signed, keys: keys)
        var finding = state.integrity ?? IntegrityFinding()
        finding.signature = check
        report(finding)
        guard check.verified else {
            throw SluiceError(.signatureInvalid, "no trusted key verifies \(what)'s \(check.format.rawValue) signature")
        }
        logger.info("\(what)'s \(check.format.rawValue) signature is verified by key \(check.key ?? "")", metadata: ["url": "\(url)"])
    }

    private func report(_ finding: IntegrityFinding) {
        state.setIntegrity(finding)
        reporter.yield(.progress(currentProgress()))
    }

    /// The last path segment of `url`, percent-decoded: the name a checksum file lists the
    /// file under. Nil when the path ends in `/`.
    public static func remoteName(of url: String) -> String? {
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
        // The job's credentials go only to its own origin; a document with its own
        // `user:pass@` gets those and none of the job's.
        let home = options.credentialsOrigin ?? url
        let jobCredentials = authorization == nil && URLOrigin(plain) != nil && URLOrigin(plain) == URLOrigin(home)
        var machine = RetryMachine(policy: options.retry)
        while true {
            let event: RetryMachine.Event
            do {
                var request = HTTPClientRequest(url: plain)
                request.headers.add(name: "User-Agent", value: "sluice/0.1")
                for (name, value) in options.headers where jobCredentials || !Fetcher.isCredential(name) {
                    request.headers.replaceOrAdd(name: name, value: value)
                }
                if let authorization { request.headers.replaceOrAdd(name: "Authorization", value: authorization) }
                let fetched = try await client.execute(
                    request, credentialsOrigin: authorization == nil ? home : plain,
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
                    let retryAfter = response.headers.first(name: "Retry-After").flatMap(ResponseCheck.retryAfterSeconds)
                    event = .transient(SluiceError(.httpStatus, "HTTP \(status)"), retryAfter: retryAfter)
                case .fatal:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    event = .final(SluiceError(.httpStatus, "HTTP \(status)"))
                }
            } catch let error as SluiceError where error.code == code {
                throw error
            } catch {
                // Classified as the file's own requests' failures are (a silent server is a
                // stall, a pause a stop).
                event = Self.event(for: error, target: URLOrigin(plain)?.shown ?? shown, scheme: URLOrigin(plain)?.scheme)
            }
            switch machine.handle(event, jitter: Double.random(in: 0...1)) {
            case .retry(let delay):
                try await options.clock.sleep(delay)
            case .fail(let error):
                throw SluiceError(code, "\(what) \(shown) could not be fetched: \(error.message)", cause: error)
            case .stop:
                throw CancellationError()
            default:
                throw SluiceError(code, "\(what) \(shown) could not be fetched")
            }
        }
    }
}
