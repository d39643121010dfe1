import SluiceSystem
import Foundation

/// `sluice serve --tls-cert` as an HTTPS origin for tests: its `/testdata` with every fault,
/// over TLS with the certificate a test chose (trusted, expired, for another name, ...).
public struct TLSOrigin: Sendable {
    public let port: Int
    public let process: ChildProcess

    /// `https://HOST:PORT` followed by `path`.
    public func url(_ path: String, host: String = "localhost") -> String { "https://\(host):\(port)\(path)" }

    /// Runs the service on 127.0.0.1:0 over TLS with `pair` and data in `data`, for `body`.
    public static func with<T: Sendable>(
        _ pair: TestCertificateAuthority.Pair, data: String, arguments: [String] = [],
        _ body: @Sendable (TLSOrigin) async throws -> T
    ) async throws -> T {
        let process = try ChildProcess(
            arguments: ["serve", "--port", "0", "--data", data, "--tls-cert", pair.certificateFile, "--tls-key", pair.keyFile]
                + arguments
        )
        do {
            let line = try await process.waitForLine(containing: "listening on https://127.0.0.1:")
            guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
                throw RawHTTPClient.Failure(description: "no port in \(line)")
            }
            let result = try await body(TLSOrigin(port: port, process: process))
            process.signal(SIGTERM)
            _ = try await process.finish(timeout: .seconds(10))
            return result
        } catch {
            process.signal(SIGKILL)
            _ = try? await process.finish(timeout: .seconds(10))
            throw error
        }
    }
}
