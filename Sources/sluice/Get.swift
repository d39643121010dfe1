import ArgumentParser
import AsyncHTTPClient
import DownloadEngine
import SluiceTLS
import Foundation
import Logging
import SluiceCore

/// `sluice get URL`: one download with the service's engine, no server.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download one URL with resumable, segmented Range connections.",
        // One paragraph per line, unwrapped: ArgumentParser wraps help to the terminal, and
        // lines wrapped here too came out ragged (`the` alone on a line).
        discussion: """
            The file is written at its offsets as it arrives; FILE.sluice beside it holds the \
            checkpoint until the file is whole. Ctrl-C stops cleanly; -c continues, also after a crash.

            Proxies: --proxy, else https_proxy, http_proxy, all_proxy and no_proxy as curl reads them. \
            TLS trusts the system store, or SSL_CERT_FILE / SSL_CERT_DIR, plus --cacert.

            Exit codes: 0 whole and verified, 1 other failure, 3 network (a proxy's refusal \
            included), 4 HTTP status, 5 checksum mismatch, 6 local file error (disk full \
            included), 60 TLS (a certificate not trusted, expired or for another name, or a \
            failed handshake), 64 usage, 130 interrupted.
            """
    )

    @Argument(help: "The http or https URL to download.")
    var url: String

    @Option(name: .shortAndLong, help: "Where to write the file (default: the URL's last path segment).")
    var output: String?

    @Option(
        name: [.customShort("x", allowingJoined: true), .customLong("connections")],
        help: "Parallel Range connections, 1-16 (-x4 works, as in aria2c)."
    )
    var connections: Int = 4

    @Flag(name: [.customShort("c"), .customLong("continue")], help: "Continue a partial download of FILE.")
    var continueDownload = false

    @Option(help: "Expected SHA-256 (hex) of the whole file.")
    var sha256: String?

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Option(help: "Seconds before the first retry; later ones double up to 60 (aria2's --retry-wait).")
    var retryWait: Double = 1

    @Option(help: ArgumentHelp("PEM certificates to trust besides the system store (a private CA).", valueName: "file"))
    var cacert: String?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Do not verify the server's certificate.")
    var insecure = false

    @Option(help: ArgumentHelp("A client certificate (PEM) for servers that ask for one.", valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The client certificate's private key (PEM).", valueName: "file"))
    var key: String?

    @Option(help: ArgumentHelp("http://[user:pass@]host:port or socks5://host:port; else the *_proxy variables.", valueName: "url"))
    var proxy: String?

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("A request header, 'Name: value'; repeatable (curl's -H). Sent to the URL's origin only.", valueName: "header")
    )
    var header: [String] = []

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: "The User-Agent to send (curl's -A); a -H User-Agent wins.")
    var userAgent: String?

    @Option(help: ArgumentHelp("At most this many bytes per second, K/M/G suffixes allowed (curl's --limit-rate).", valueName: "rate"))
    var limitRate: String?

    func validate() throws {
        guard (1...16).contains(connections) else { throw ValidationError("-x must be between 1 and 16") }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            components.host?.isEmpty == false
        else { throw ValidationError("not an absolute URL: \(URLCredentials.redacted(url))") }
        guard scheme == "http" || scheme == "https" else { throw ValidationError("unsupported scheme \(scheme): use http or https") }
        guard retryWait >= 0, retryWait <= 60 else { throw ValidationError("--retry-wait must be 0...60 seconds") }
        if let sha256, sha256.count != 64 || !sha256.allSatisfy(\.isHexDigit) {
            throw ValidationError("--sha256 must be 64 hexadecimal digits")
        }
        _ = try settings()
        _ = try requestHeaders()
        _ = try rate()
    }

    /// `-A` then each `-H`, as the job's headers are checked (reserved names, sizes).
    func requestHeaders() throws -> [String: String] {
        // A -H User-Agent replaces -A.
        let headers = try HeaderLines.parse(header, into: userAgent.map { ["User-Agent": $0] } ?? [:])
        do {
            try CreateJobRequest.validateHeaders(headers)
        } catch let error as SluiceError {
            throw ValidationError(error.message.replacingOccurrences(of: "header ", with: "-H "))
        }
        return headers
    }

    /// `--limit-rate` in bytes per second; nil for none.
    func rate() throws -> Int64? {
        guard let limitRate else { return nil }
        guard let bytes = ByteSize.parse(limitRate, limit: RateLimit.maximum), bytes > 0 else {
            throw ValidationError("--limit-rate must be a positive byte count (like 500K or 2M), not \(limitRate)")
        }
        return bytes
    }

    /// The proxies and the TLS trust this download uses; a bad value is a usage error.
    private func settings() throws -> (ProxySettings, TLSTrust) {
        let environment = ProcessInfo.processInfo.environment
        do {
            return (
                try ProxySettings.from(flag: proxy, environment: environment),
                try TLSTrust.make(caFile: cacert, clientCertificate: cert, clientKey: key, environment: environment, caField: "cacert")
            )
        } catch let error as SluiceError {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        let path =
            output
            ?? FileNameSanitizer.downloadName(
                contentDisposition: nil, urlPath: URLComponents(string: url)?.percentEncodedPath ?? ""
            )
        let checkpoints = JSONFileCheckpointStore(path: path + ".sluice")
        if continueDownload {
            if try await checkpoints.load() == nil, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int64,
                size > 0, !quiet
            {
                printError("sluice: no checkpoint beside \(path); continuing from its \(ByteSize.human(size)), as curl -C - would")
            }
        } else {
            try await checkpoints.remove()
        }
        let (proxies, trust) = try settings()
        let client = Fetcher(stallTimeout: 30, connectionsPerHost: connections, proxies: proxies, trust: trust)
        var logger = Logger(label: "sluice.get")
        logger.logLevel = Environment.string("SLUICE_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .warning
        let bar = ProgressReporter(enabled: !quiet)
        let download = Download(
            url: url,
            target: DownloadTarget(partialPath: path, destination: .file(path), fileName: (path as NSString).lastPathComponent),
            options: {
                var options = DownloadOptions(
                    connections: connections, expectedSHA256: sha256, retry: RetryPolicy(base: retryWait, maximum: max(retryWait, 60))
                )
                options.continuePartial = continueDownload
                options.insecure = insecure
                options.headers = (try? requestHeaders()) ?? [:]
                options.rateLimiter = (try? rate())?.map { RateLimiter(bytesPerSecond: $0) }
                return options
            }(),
            client: client, checkpoints: checkpoints, logger: logger
        )
        // What this run made is removed if it fails before a byte is written (as `curl -f`
        // leaves nothing); a file that was there (`-c`) is left as it was.
        let existed = FileManager.default.fileExists(atPath: path)
        let started = ContinuousClock.now
        let task = Task { try await download.run() }
        let interrupt = InterruptHandler { task.cancel() }
        for await event in download.events {
            switch event {
            case .progress(let progress): bar.show(progress)
            case .retrying(let reason, let delay, let failures):
                bar.say("sluice: \(reason); retrying in \(Self.seconds(delay)) (failure \(failures))")
            case .checkpointed: continue
            }
        }
        let outcome = await task.result
        interrupt.cancel()
        try await client.shutdown()
        bar.finish()
        if case .failure = outcome, !existed, download.currentProgress().bytesDone == 0 {
            try? FileManager.default.removeItem(atPath: path)
            try? await checkpoints.remove()
        }
        switch outcome {
        case .success(let result):
            // The file is in place: its placement intent has done its work.
            try? await checkpoints.remove()
            if !quiet {
                let seconds = (ContinuousClock.now - started) / .seconds(1)
                let rate = seconds > 0 ? Double(result.bytes) / seconds : 0
                printError(
                    "saved \(result.path): \(ByteSize.human(result.bytes)) in \(String(format: "%.1f", seconds)) s "
                        + "(\(ByteSize.human(Int64(rate)))/s), sha256 \(result.sha256)"
                )
            }
        case .failure(is CancellationError):
            let done = download.currentProgress().bytesDone
            printError(done > 0 ? "sluice: interrupted; run again with -c to continue from \(ByteSize.human(done))" : "sluice: interrupted")
            throw ExitCode(130)
        case .failure(let error as SluiceError):
            printError("sluice: \(error.message) (\(error.code))")
            if error.code == .tls, !insecure {
                printError("sluice: to trust a private CA, give its certificate with --cacert FILE (or SSL_CERT_FILE); -k skips the check")
            }
            throw ExitCode(Self.exitCode(for: error.code))
        case .failure:
            printError("sluice: the download failed")
            throw ExitCode.failure
        }
    }

    /// `2 s`, `0.5 s`: a retry's wait as a person reads it.
    static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if value < 1 { return "\(Int((value * 1000).rounded())) ms" }
        return value >= 10 || value == value.rounded() ? "\(Int(value.rounded())) s" : String(format: "%.1f s", value)
    }

    static func exitCode(for code: SluiceError.Code) -> Int32 {
        switch code {
        case .network, .tooManyRedirects, .invalidResponse, .remoteChanged: 3
        case .httpStatus: 4
        case .checksumMismatch: 5
        case .noSpace, .io: 6
        case .tls: 60
        case .invalidURL, .unsupportedScheme: 64
        default: 1
        }
    }
}
