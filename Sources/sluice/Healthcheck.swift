import ArgumentParser
import AsyncHTTPClient
import Configuration
import Foundation
import SluiceServer
import DownloadEngine
import SluiceTLS
import NIOHTTP1
import NIOCore
import SluiceCore

/// `sluice healthcheck`: exit 0 when the service answers `/healthz` (for container checks).
struct Healthcheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exit 0 when the service answers /healthz, 1 otherwise."
    )

    @Option(help: "The service's base URL (default http://127.0.0.1:$SLUICE_PORT, port 8080; https when SLUICE_TLS_CERT is set).")
    var url: String?

    @Option(help: ArgumentHelp("PEM certificates to trust besides the system store, for an https URL.", valueName: "file"))
    var cacert: String?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Do not verify the service's certificate.")
    var insecure = false

    func run() async throws {
        let scheme = ServeSettings.tlsCert.text(nil, in: .processEnvironment) == nil ? "http" : "https"
        let base = url ?? "\(scheme)://127.0.0.1:\(ServeSettings.port.text(nil, in: .processEnvironment) ?? "8080")"
        let target = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/healthz"
        let trust: TLSTrust
        do {
            trust = try TLSTrust.make(caFile: cacert, environment: ProcessInfo.processInfo.environment, caField: "cacert")
        } catch let error as SluiceError {
            throw ValidationError(error.message)
        }
        // The container's own check reaches its own address: its certificate names the
        // public host, so without --cacert an https check of 127.0.0.1 skips verification.
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = trust.clientConfiguration(insecure: insecure || (url == nil && cacert == nil))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let status: UInt?
        do {
            status = try await client.execute(HTTPClientRequest(url: target), timeout: .seconds(3)).status.code
        } catch {
            // A certificate problem in words, as `get` says it, not the TLS library's.
            let tls = await Fetcher.tlsFailure(error, url: target)
            printError("sluice healthcheck: \(target): \(tls?.message ?? "\(error)")")
            status = nil
        }
        try? await client.shutdown()
        guard let status else { throw ExitCode.failure }
        guard status == 200 else {
            printError("sluice healthcheck: \(target) answered \(status)")
            throw ExitCode.failure
        }
    }
}
