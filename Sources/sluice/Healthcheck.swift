import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import NIOCore

/// `sluice healthcheck`: exit 0 when the service answers `/healthz` (for container checks).
struct Healthcheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exit 0 when the service answers /healthz, 1 otherwise."
    )

    @Option(help: "The service's base URL (default http://127.0.0.1:$SLUICE_PORT, port 8080).")
    var url: String?

    func run() async throws {
        let base = url ?? "http://127.0.0.1:\(Environment.string("SLUICE_PORT") ?? "8080")"
        let target = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/healthz"
        do {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: target), timeout: .seconds(3))
            guard response.status == .ok else {
                printError("sluice healthcheck: \(target) answered \(response.status.code)")
                throw ExitCode.failure
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("sluice healthcheck: \(target): \(error)")
            throw ExitCode.failure
        }
    }
}
