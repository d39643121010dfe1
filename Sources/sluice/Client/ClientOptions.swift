import ArgumentParser
import Foundation

/// What every client command takes: the service's address, its token, and `--json`.
/// `--token-file` wins over `SLUICE_TOKEN`; an empty `SLUICE_TOKEN` counts as unset; the
/// file's content is trimmed.
struct ClientOptions: ParsableArguments {
    @Option(help: "The service, http[s]://host:port (env SLUICE_URL, default http://127.0.0.1:8080).")
    var server: String?

    @Option(help: ArgumentHelp("A file holding the token (wins over env SLUICE_TOKEN).", valueName: "file"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("PEM certificates to trust for an https service, besides the system's.", valueName: "file"))
    var cacert: String?

    @Flag(help: "Print the API's JSON, for scripts.")
    var json = false

    var baseURL: String {
        let base = server ?? Environment.string("SLUICE_URL") ?? "http://127.0.0.1:8080"
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    func token() throws -> String? {
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw ValidationError("cannot read --token-file \(tokenFile)")
            }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw ValidationError("--token-file \(tokenFile) is empty") }
            return token
        }
        return Environment.string("SLUICE_TOKEN")
    }

    func validate() throws {
        guard let components = URLComponents(string: baseURL), ["http", "https"].contains(components.scheme?.lowercased() ?? ""),
            components.host?.isEmpty == false
        else { throw ValidationError("--server must be http[s]://host:port, not \(baseURL)") }
        _ = try token()
    }

    func client() throws -> ServiceClient {
        try ServiceClient(base: baseURL, token: token(), cacert: cacert)
    }
}
