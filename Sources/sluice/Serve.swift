import ArgumentParser
import Hummingbird
import Logging
import SluiceAPI
import SluiceServer
import SluiceCore
import DownloadEngine
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the service: jobs API, live events, dashboard, Range origin and metrics on one port."
    )

    @Option(help: "Address to bind (env SLUICE_HOST, default 127.0.0.1).")
    var host: String?

    @Option(help: "Port; 0 picks a free one (env SLUICE_PORT, default 8080).")
    var port: Int?

    @Option(name: .customLong("data"), help: "Data directory (env SLUICE_DATA, default ./sluice-data).")
    var dataDirectory: String?

    @Option(help: "Directory served under /files/ (env SLUICE_ORIGIN_ROOT, default DATA/documents).")
    var originRoot: String?

    @Option(help: "Jobs running at once (env SLUICE_MAX_ACTIVE, default 3).")
    var maxActive: Int?

    @Option(help: "Bearer token every API route requires (env SLUICE_TOKEN).")
    var token: String?

    @Option(help: "Download rate limit in bytes per second, K/M/G suffixes allowed (env SLUICE_LIMIT_RATE).")
    var limitRate: String?

    @Option(
        name: .customLong("public"),
        help: "Serve the dashboard and openapi.yaml from this directory, for development (env SLUICE_PUBLIC; default: the copy built in)."
    )
    var publicDirectory: String?

    @Flag(help: "Allow a non-loopback address without a token (env SLUICE_INSECURE_NO_AUTH=1).")
    var insecureNoAuth = false

    @Flag(
        inversion: .prefixedNo,
        help: """
            Let jobs reach loopback, private, link-local and other non-public addresses (env \
            SLUICE_ALLOW_PRIVATE_NETWORKS=1 or 0; default: allowed on a loopback bind, refused otherwise).
            """
    )
    var allowPrivateNetworks: Bool?

    @Option(help: "Comma-separated Host names answered besides loopback ones (env SLUICE_ALLOWED_HOSTS).")
    var allowedHosts: String?

    @Option(
        help:
            "Comma-separated origins of other sites whose pages may call /jsonrpc, such as http://ariang.example:6880 (env SLUICE_ALLOWED_ORIGINS)."
    )
    var allowedOrigins: String?

    @Flag(help: "Let aria2.shutdown and aria2.forceShutdown stop the service gracefully (env SLUICE_RPC_ALLOW_SHUTDOWN=1).")
    var rpcAllowShutdown = false

    @Option(help: "Open connections at most (env SLUICE_MAX_CONNECTIONS, default 4096).")
    var maxConnections: Int?

    @Option(
        help:
            "Free space a download may not reserve, K/M/G suffixes allowed (env SLUICE_MIN_FREE_SPACE; default: the smaller of 512M and 5% of the file system)."
    )
    var minFreeSpace: String?

    @Option(help: "URL told (POST, JSON) when any job completes, fails or is removed (env SLUICE_WEBHOOK).")
    var webhook: String?

    @Option(
        help: "Secret that signs webhook calls: Sluice-Signature: t=UNIX,v1=HMAC-SHA256(secret, \"t.BODY\") (env SLUICE_WEBHOOK_SECRET).")
    var webhookSecret: String?

    @Option(help: "How long a failing webhook delivery is retried, as 90s, 30m, 24h or 7d (env SLUICE_WEBHOOK_RETRY_FOR, default 24h).")
    var webhookRetryFor: String?

    @Option(
        help:
            "How long a delivered or given-up webhook delivery is kept (its body holds the job's URL), as 30m, 24h or 7d (env SLUICE_WEBHOOK_RETENTION, default 7d)."
    )
    var webhookRetention: String?

    @Option(
        help:
            "Proxy for every download: http://[user:pass@]host:port or socks5://host:port (env SLUICE_PROXY; else https_proxy, http_proxy, all_proxy and no_proxy as curl reads them)."
    )
    var proxy: String?

    @Option(help: "Connections of all downloads to one host at once, 1-1024 (env SLUICE_MAX_CONNECTIONS_PER_HOST, default 16).")
    var maxConnectionsPerHost: Int?

    @Option(
        help:
            "Job store shared by a cluster's nodes: postgres://user:password@host:port/database (env SLUICE_STORE; default: SQLite in the data directory)."
    )
    var store: String?

    @Option(help: "This node's name in a cluster, unique among its nodes (env SLUICE_NODE_NAME, default: the host name).")
    var nodeName: String?

    @Option(
        help:
            "How long a node's claim on a job lasts unrenewed, as 15s or 2m; a node silent longer loses its jobs to the others (env SLUICE_LEASE, default 15s)."
    )
    var lease: String?

    @Option(
        help: ArgumentHelp(
            "Serve every route over TLS with this certificate chain (PEM, leaf first; env SLUICE_TLS_CERT). SIGHUP reads it again.",
            valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key of --tls-cert (PEM; env SLUICE_TLS_KEY).", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "PEM certificates downloads, webhooks and the store trust besides the system store, or SSL_CERT_FILE / SSL_CERT_DIR when set (env SLUICE_CA_FILE).",
            valueName: "file"))
    var caFile: String?

    @Flag(help: "Let a job set \"insecure\": true to skip verifying its server's certificate (env SLUICE_ALLOW_INSECURE_TLS=1).")
    var allowInsecureTLS = false

    func resolvedConfiguration() throws -> ServiceConfiguration {
        func integer(_ flag: Int?, _ name: String, default value: Int) throws -> Int {
            if let flag { return flag }
            guard let text = Environment.string(name) else { return value }
            guard let number = Int(text) else { throw ValidationError("\(name) must be a whole number, not \(text)") }
            return number
        }
        // Absolute from here on: the paths the service reports (aria2's `dir`, which clients
        // send back) must not depend on where it was started, nor carry `./`.
        let data = URL(fileURLWithPath: dataDirectory ?? Environment.string("SLUICE_DATA") ?? "./sluice-data").standardizedFileURL.path
        if token == "" || (token == nil && Environment.isSetButEmpty("SLUICE_TOKEN")) {
            throw ValidationError("the token is empty: set --token / SLUICE_TOKEN to a secret, or leave it unset")
        }
        var configuration = ServiceConfiguration(
            host: host ?? Environment.string("SLUICE_HOST") ?? "127.0.0.1",
            port: try integer(port, "SLUICE_PORT", default: 8080),
            dataDirectory: data,
            originRoot: originRoot ?? Environment.string("SLUICE_ORIGIN_ROOT"),
            maxActive: try integer(maxActive, "SLUICE_MAX_ACTIVE", default: 3),
            token: token ?? Environment.string("SLUICE_TOKEN"),
            limitRate: try (limitRate ?? Environment.string("SLUICE_LIMIT_RATE")).map { text in
                guard let bytes = ByteSize.parse(text, limit: .max), bytes > 0 else {
                    throw ValidationError("--limit-rate must be a positive byte count, not \(text)")
                }
                return bytes
            },
            publicDirectory: publicDirectory ?? Environment.string("SLUICE_PUBLIC")
        )
        configuration.allowPrivateNetworks = try allowPrivateNetworks ?? Environment.optionalFlag("SLUICE_ALLOW_PRIVATE_NETWORKS")
        configuration.allowedHosts = (allowedHosts ?? Environment.string("SLUICE_ALLOWED_HOSTS")).map { list in
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        configuration.allowedOrigins =
            (allowedOrigins ?? Environment.string("SLUICE_ALLOWED_ORIGINS")).map { list in
                list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            } ?? []
        for origin in configuration.allowedOrigins where WebOrigin(origin) == nil {
            throw ValidationError(
                "--allowed-origins: \(origin) is not an origin such as http://ariang.example:6880 (http or https, host, optional port, no path)"
            )
        }
        configuration.rpcAllowShutdown = rpcAllowShutdown || Environment.flag("SLUICE_RPC_ALLOW_SHUTDOWN")
        configuration.maxConnections = try integer(maxConnections, "SLUICE_MAX_CONNECTIONS", default: 4096)
        configuration.minFreeSpace = try (minFreeSpace ?? Environment.string("SLUICE_MIN_FREE_SPACE")).map { text in
            guard let bytes = ByteSize.parse(text, limit: .max) else {
                throw ValidationError("--min-free-space must be a byte count with an optional K, M or G suffix, not \(text)")
            }
            return bytes
        }
        try resolveIntegrations(into: &configuration, integer: integer)
        guard configuration.maxConnections >= 16 else { throw ValidationError("--max-connections must be at least 16") }
        guard (0...65535).contains(configuration.port) else { throw ValidationError("--port must be 0...65535") }
        guard QueueSettings.maxActiveRange.contains(configuration.maxActive) else {
            throw ValidationError("--max-active must be between 1 and 64")
        }
        if !configuration.isLoopbackBind, configuration.token == nil, !(insecureNoAuth || Environment.flag("SLUICE_INSECURE_NO_AUTH")) {
            throw ValidationError(
                "refusing to listen on \(configuration.host) without a token: set --token or SLUICE_TOKEN, "
                    + "or pass --insecure-no-auth (SLUICE_INSECURE_NO_AUTH=1) to accept anyone on the network"
            )
        }
        return configuration
    }

    /// Webhooks, proxies and the per-host cap (issue 13).
    private func resolveIntegrations(
        into configuration: inout ServiceConfiguration, integer: (Int?, String, Int) throws -> Int
    ) throws {
        do {
            if let url = webhook ?? Environment.string("SLUICE_WEBHOOK") {
                configuration.webhookURL = try EndpointURL(url, schemes: EndpointURL.webhookSchemes, field: "--webhook").text
            }
            configuration.proxies = try ProxySettings.from(
                flag: proxy ?? Environment.string("SLUICE_PROXY"), environment: ProcessInfo.processInfo.environment
            )
        } catch let error as SluiceError {
            throw ValidationError(error.message)
        }
        if webhookSecret == "" || (webhookSecret == nil && Environment.isSetButEmpty("SLUICE_WEBHOOK_SECRET")) {
            throw ValidationError(
                "the webhook secret is empty: set --webhook-secret / SLUICE_WEBHOOK_SECRET to a secret, or leave it unset")
        }
        configuration.webhookSecret = webhookSecret ?? Environment.string("SLUICE_WEBHOOK_SECRET")
        if let text = webhookRetryFor ?? Environment.string("SLUICE_WEBHOOK_RETRY_FOR") {
            guard let seconds = DurationText.seconds(text) else {
                throw ValidationError("--webhook-retry-for must be a duration such as 90s, 30m, 24h or 7d, not \(text)")
            }
            configuration.webhookSchedule.retryFor = seconds
        }
        if let text = webhookRetention ?? Environment.string("SLUICE_WEBHOOK_RETENTION") {
            guard let seconds = DurationText.seconds(text) else {
                throw ValidationError("--webhook-retention must be a duration such as 30m, 24h or 7d, not \(text)")
            }
            configuration.webhookRetention = .seconds(seconds)
        }
        configuration.maxConnectionsPerHost = try integer(maxConnectionsPerHost, "SLUICE_MAX_CONNECTIONS_PER_HOST", 16)
        guard (1...1024).contains(configuration.maxConnectionsPerHost) else {
            throw ValidationError("--max-connections-per-host must be between 1 and 1024")
        }
        if let store = store ?? Environment.string("SLUICE_STORE") {
            do {
                configuration.store = try PostgresLocation(store)
            } catch let error as SluiceError {
                throw ValidationError(error.message)
            }
        }
        if let name = nodeName ?? Environment.string("SLUICE_NODE_NAME") {
            guard NodeName.isValid(name) else {
                throw ValidationError("--node-name must be 1-64 letters, digits, '.', '_' or '-', not \(name)")
            }
            configuration.nodeName = name
        }
        try resolveTLS(into: &configuration)
        if let text = lease ?? Environment.string("SLUICE_LEASE") {
            guard let seconds = DurationText.seconds(text), seconds >= 1, seconds <= 3600 else {
                throw ValidationError("--lease must be a duration from 1s to 1h, such as 15s or 2m, not \(text)")
            }
            configuration.lease = .seconds(seconds)
        }
    }

    /// TLS served and trusted (issue 19): the pair must come together and be usable, so a
    /// typo fails at start, not at the first connection.
    private func resolveTLS(into configuration: inout ServiceConfiguration) throws {
        let certificate = tlsCert ?? Environment.string("SLUICE_TLS_CERT")
        let key = tlsKey ?? Environment.string("SLUICE_TLS_KEY")
        switch (certificate, key) {
        case (nil, nil): break
        case (.some, nil): throw ValidationError("--tls-cert needs --tls-key (SLUICE_TLS_KEY): the certificate's private key")
        case (nil, .some): throw ValidationError("--tls-key needs --tls-cert (SLUICE_TLS_CERT): the certificate chain")
        case (let certificate?, let key?):
            do {
                _ = try ServerCertificate(certificatePath: certificate, keyPath: key)
            } catch let error as SluiceError {
                throw ValidationError(error.message)
            }
            configuration.tlsCertificate = certificate
            configuration.tlsKey = key
        }
        configuration.caFile = caFile ?? Environment.string("SLUICE_CA_FILE")
        do {
            _ = try TLSTrust.make(caFile: configuration.caFile, environment: ProcessInfo.processInfo.environment)
        } catch let error as SluiceError {
            throw ValidationError(error.message)
        }
        configuration.allowInsecureTLS = allowInsecureTLS || Environment.flag("SLUICE_ALLOW_INSECURE_TLS")
    }

    func run() async throws {
        let configuration = try resolvedConfiguration()
        OpenFileLimit.raiseToHardLimit()
        // The API answers first: downloads take the cycles it leaves.
        DataPlane.yieldToControlPlane()
        var logger = Logger(label: "sluice")
        logger.logLevel = Environment.string("SLUICE_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info
        let service: SluiceService
        do {
            service = try await buildService(configuration: configuration, logger: logger) { url in
                printLine("Sluice listening on \(url)")
                printLine("dashboard and openapi.yaml: \(configuration.publicDirectory.map { "from \($0) (--public)" } ?? "built in")")
            }
        } catch let error as SluiceError {
            printError("sluice: \(error.message)")
            throw ExitCode.failure
        }
        try await service.run(logger: logger)
    }
}
