import ArgumentParser
import Hummingbird
import Logging
import SluiceAPI
import SluiceServer
import SluiceCore
import DownloadEngine
import SluiceTLS
import Configuration
import Foundation
import NIOCore
import SluiceSystem

private typealias S = ServeSettings

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the service: jobs API, live events, dashboard, Range origin and metrics on one port."
    )

    // Each flag's name and help come from its row in `ServeSettings`, which also makes
    // docs/settings.md's table (checked by SettingsTableTests).
    @Option(name: .customLong(S.host.name!), help: S.host.argumentHelp)
    var host: String?

    @Option(name: .customLong(S.port.name!), help: S.port.argumentHelp)
    var port: Int?

    @Option(name: .customLong(S.data.name!), help: S.data.argumentHelp)
    var dataDirectory: String?

    @Option(name: .customLong(S.originRoot.name!), help: S.originRoot.argumentHelp)
    var originRoot: String?

    @Option(name: .customLong(S.maxActive.name!), help: S.maxActive.argumentHelp)
    var maxActive: Int?

    @Option(name: .customLong(S.token.name!), help: S.token.argumentHelp)
    var token: String?

    @Option(name: .customLong(S.limitRate.name!), help: S.limitRate.argumentHelp)
    var limitRate: String?

    @Option(name: .customLong(S.schedule.name!), help: S.schedule.argumentHelp)
    var schedule: String?

    @Option(name: .customLong(S.publicDirectory.name!), help: S.publicDirectory.argumentHelp)
    var publicDirectory: String?

    @Flag(name: .customLong(S.insecureNoAuth.name!), help: S.insecureNoAuth.argumentHelp)
    var insecureNoAuth = false

    @Flag(name: .customLong(S.allowPrivateNetworks.name!), inversion: .prefixedNo, help: S.allowPrivateNetworks.argumentHelp)
    var allowPrivateNetworks: Bool?

    @Option(name: .customLong(S.allowedHosts.name!), help: S.allowedHosts.argumentHelp)
    var allowedHosts: String?

    @Option(name: .customLong(S.allowedOrigins.name!), help: S.allowedOrigins.argumentHelp)
    var allowedOrigins: String?

    @Flag(name: .customLong(S.rpcAllowShutdown.name!), help: S.rpcAllowShutdown.argumentHelp)
    var rpcAllowShutdown = false

    @Option(name: .customLong(S.maxConnections.name!), help: S.maxConnections.argumentHelp)
    var maxConnections: Int?

    @Option(name: .customLong(S.minFreeSpace.name!), help: S.minFreeSpace.argumentHelp)
    var minFreeSpace: String?

    @Option(name: .customLong(S.webhook.name!), help: S.webhook.argumentHelp)
    var webhook: String?

    @Option(name: .customLong(S.webhookSecret.name!), help: S.webhookSecret.argumentHelp)
    var webhookSecret: String?

    @Option(name: .customLong(S.webhookRetryFor.name!), help: S.webhookRetryFor.argumentHelp)
    var webhookRetryFor: String?

    @Option(name: .customLong(S.webhookRetention.name!), help: S.webhookRetention.argumentHelp)
    var webhookRetention: String?

    @Option(name: .customLong(S.proxy.name!), help: S.proxy.argumentHelp)
    var proxy: String?

    @Option(name: .customLong(S.maxConnectionsPerHost.name!), help: S.maxConnectionsPerHost.argumentHelp)
    var maxConnectionsPerHost: Int?

    @Option(name: .customLong(S.store.name!), help: S.store.argumentHelp)
    var store: String?

    @Option(name: .customLong(S.nodeName.name!), help: S.nodeName.argumentHelp)
    var nodeName: String?

    @Option(name: .customLong(S.lease.name!), help: S.lease.argumentHelp)
    var lease: String?

    @Option(name: .customLong(S.tlsCert.name!), help: S.tlsCert.argumentHelp)
    var tlsCert: String?

    @Option(name: .customLong(S.tlsKey.name!), help: S.tlsKey.argumentHelp)
    var tlsKey: String?

    @Option(name: .customLong(S.caFile.name!), help: S.caFile.argumentHelp)
    var caFile: String?

    @Flag(name: .customLong(S.allowInsecureTLS.name!), help: S.allowInsecureTLS.argumentHelp)
    var allowInsecureTLS = false

    @Option(name: .customLong(S.trustedKeys.name!), help: S.trustedKeys.argumentHelp)
    var trustedKeys: String?

    func resolvedConfiguration(environment env: ConfigReader = .processEnvironment) throws -> ServiceConfiguration {
        do {
            return try resolve(env)
        } catch let error as SettingError {
            throw ValidationError(error.description)
        } catch let error as SluiceError {
            throw ValidationError(error.message)
        }
    }

    private func resolve(_ env: ConfigReader) throws -> ServiceConfiguration {
        // Absolute from here on: the paths the service reports (aria2's `dir`, which clients
        // send back) must not depend on where it was started, nor carry `./`.
        let data = URL(fileURLWithPath: S.data.text(dataDirectory, in: env) ?? "./sluice-data").standardizedFileURL.path
        if token == "" || (token == nil && S.token.isSetButEmpty(in: env)) {
            throw ValidationError("the token is empty: set --token / SLUICE_TOKEN to a secret, or leave it unset")
        }
        var configuration = ServiceConfiguration(
            host: S.host.text(host, in: env) ?? "127.0.0.1",
            port: try S.port.integer(port, in: env, default: 8080),
            dataDirectory: data,
            originRoot: S.originRoot.text(originRoot, in: env),
            maxActive: try S.maxActive.integer(maxActive, in: env, default: 3),
            token: S.token.text(token, in: env),
            limitRate: try S.limitRate.bytes(limitRate, in: env),
            publicDirectory: S.publicDirectory.text(publicDirectory, in: env)
        )
        if let path = S.schedule.text(schedule, in: env) { configuration.schedule = try Self.schedule(from: path) }
        configuration.allowPrivateNetworks = try S.allowPrivateNetworks.onOff(allowPrivateNetworks, in: env)
        configuration.allowedHosts = S.allowedHosts.text(allowedHosts, in: env).map(Self.list)
        configuration.allowedOrigins = S.allowedOrigins.text(allowedOrigins, in: env).map(Self.list) ?? []
        for origin in configuration.allowedOrigins where WebOrigin(origin) == nil {
            throw ValidationError(
                "--allowed-origins: \(origin) is not an origin such as http://ariang.example:6880 (http or https, host, optional port, no path)"
            )
        }
        configuration.rpcAllowShutdown = S.rpcAllowShutdown.isOn(rpcAllowShutdown, in: env)
        configuration.maxConnections = try S.maxConnections.integer(maxConnections, in: env, default: 4096)
        configuration.minFreeSpace = try S.minFreeSpace.bytes(minFreeSpace, in: env)
        try resolveIntegrations(into: &configuration, env)
        if !configuration.isLoopbackBind, configuration.token == nil, !S.insecureNoAuth.isOn(insecureNoAuth, in: env) {
            throw ValidationError(
                "refusing to listen on \(configuration.host) without a token: set --token or SLUICE_TOKEN, "
                    + "or pass --insecure-no-auth (SLUICE_INSECURE_NO_AUTH=1) to accept anyone on the network"
            )
        }
        return configuration
    }

    /// `--schedule FILE`: the JSON `PUT /schedule` takes, checked the same.
    static func schedule(from path: String) throws -> Schedule {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--schedule: cannot read \(path)")
        }
        guard data.count <= 64 << 10 else { throw ValidationError("--schedule: \(path) is larger than 64 KiB") }
        do {
            return try Schedule(json: try JSONDecoder().decode(JSONValue.self, from: data))
        } catch let error as SluiceError {
            throw ValidationError("--schedule: \(path): \(error.message)")
        } catch {
            throw ValidationError("--schedule: \(path) is not valid JSON")
        }
    }

    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Webhooks, proxies, the per-host cap and the cluster (issue 13).
    private func resolveIntegrations(into configuration: inout ServiceConfiguration, _ env: ConfigReader) throws {
        if let url = S.webhook.text(webhook, in: env) {
            configuration.webhookURL = try EndpointURL(url, schemes: EndpointURL.webhookSchemes, field: "--webhook").text
        }
        configuration.proxies = try ProxySettings.from(
            flag: S.proxy.text(proxy, in: env), environment: ProcessInfo.processInfo.environment
        )
        if webhookSecret == "" || (webhookSecret == nil && S.webhookSecret.isSetButEmpty(in: env)) {
            throw ValidationError(
                "the webhook secret is empty: set --webhook-secret / SLUICE_WEBHOOK_SECRET to a secret, or leave it unset")
        }
        configuration.webhookSecret = S.webhookSecret.text(webhookSecret, in: env)
        if let seconds = try S.webhookRetryFor.seconds(webhookRetryFor, in: env) {
            configuration.webhookSchedule.retryFor = seconds
        }
        if let seconds = try S.webhookRetention.seconds(webhookRetention, in: env) {
            configuration.webhookRetention = .seconds(seconds)
        }
        configuration.maxConnectionsPerHost = try S.maxConnectionsPerHost.integer(maxConnectionsPerHost, in: env, default: 16)
        if let store = S.store.text(store, in: env) {
            configuration.store = try PostgresLocation(store)
        }
        if let name = S.nodeName.text(nodeName, in: env) {
            guard NodeName.isValid(name) else {
                throw ValidationError("--node-name must be 1-64 letters, digits, '.', '_' or '-', not \(name)")
            }
            configuration.nodeName = name
        }
        try resolveTLS(into: &configuration, env)
        if let seconds = try S.lease.seconds(lease, in: env) {
            configuration.lease = .seconds(seconds)
        }
    }

    /// TLS served and trusted (issue 19): the pair must come together and be usable, so a
    /// typo fails at start, not at the first connection.
    private func resolveTLS(into configuration: inout ServiceConfiguration, _ env: ConfigReader) throws {
        let certificate = S.tlsCert.text(tlsCert, in: env)
        let key = S.tlsKey.text(tlsKey, in: env)
        switch (certificate, key) {
        case (nil, nil): break
        case (.some, nil): throw ValidationError("--tls-cert needs --tls-key (SLUICE_TLS_KEY): the certificate's private key")
        case (nil, .some): throw ValidationError("--tls-key needs --tls-cert (SLUICE_TLS_CERT): the certificate chain")
        case (let certificate?, let key?):
            _ = try ServerCertificate(certificatePath: certificate, keyPath: key)
            configuration.tlsCertificate = certificate
            configuration.tlsKey = key
        }
        configuration.caFile = S.caFile.text(caFile, in: env)
        _ = try TLSTrust.make(caFile: configuration.caFile, environment: ProcessInfo.processInfo.environment)
        configuration.allowInsecureTLS = S.allowInsecureTLS.isOn(allowInsecureTLS, in: env)
        configuration.trustedKeysDirectory = S.trustedKeys.text(trustedKeys, in: env)
    }

    func run() async throws {
        let configuration = try resolvedConfiguration()
        // A port in use is said at once, before the job service starts anything.
        if let problem = ListenCheck.problem(host: configuration.host, port: configuration.port) {
            printError("sluice: \(problem)")
            throw ExitCode.failure
        }
        OpenFileLimit.raiseToHardLimit()
        // The API answers first: downloads take the cycles it leaves.
        DataPlane.yieldToControlPlane()
        var logger = Logger(label: "sluice")
        logger.logLevel = S.logLevel.text(nil, in: .processEnvironment).flatMap(Logger.Level.init(rawValue:)) ?? .info
        do {
            try await SluiceServer.withService(configuration: configuration, logger: logger) { url in
                printLine("Sluice listening on \(url)")
                printLine("dashboard and openapi.yaml: \(configuration.publicDirectory.map { "from \($0) (--public)" } ?? "built in")")
            } _: { service in
                do {
                    try await service.run(logger: logger)
                } catch let error as IOError where [EADDRINUSE, EACCES, EADDRNOTAVAIL].contains(error.errnoCode) {
                    // Taken between the check above and the server's own bind.
                    printError("sluice: \(ListenCheck.message(errno: error.errnoCode, host: configuration.host, port: configuration.port))")
                    throw ExitCode.failure
                }
            }
        } catch let error as SluiceError {
            printError("sluice: \(error.message)")
            throw ExitCode.failure
        }
    }
}
