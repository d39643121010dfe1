import SluiceCore

/// Every setting of `sluice serve`, in the order `--help` and docs/settings.md list them.
/// `Serve` declares its flags with these names and help lines and reads its values through
/// them; `SettingsTableTests` fails when docs/settings.md's table is not `markdownTable`.
public enum ServeSettings {
    public static let host = ServeSetting("host", "Address to bind", default: "127.0.0.1", documented: "`127.0.0.1`")
    public static let port = ServeSetting(
        "port", .integer(0...65535), "Port; 0 picks a free one", default: "8080",
        documented: "`8080` (`0` picks a free port and prints it)")
    public static let data = ServeSetting(
        "data", value: "DIR", "Data directory: the job store, the cache and the documents", default: "./sluice-data",
        documented: "`./sluice-data`")
    public static let originRoot = ServeSetting(
        "origin-root", value: "DIR", "Directory served under /files/", default: "DATA/documents", documented: "`DATA/documents`")
    public static let maxActive = ServeSetting(
        "max-active", value: "N", .integer(QueueSettings.maxActiveRange), "Jobs running at once (the first start only; then PATCH /queue)",
        default: "3", documented: "`3` (1 to 64; the first start only, see `PATCH /queue`)")
    public static let token = ServeSetting("token", value: "T", "Bearer token every API route requires", documented: "none")
    public static let limitRate = ServeSetting(
        "limit-rate", value: "BYTES", .bytes(minimum: 1),
        "Download rate limit in bytes per second, K/M/G suffixes allowed (the first start only; then PATCH /queue)",
        documented: "unlimited (the first start only, see `PATCH /queue`)")
    public static let schedule = ServeSetting(
        "schedule", value: "FILE", "A schedule (JSON, as PUT /schedule takes it) stored and put in effect at start",
        documented: "none: the stored one (see [`PUT /schedule`](api.md#the-schedule))")
    public static let publicDirectory = ServeSetting(
        "public", value: "DIR", "Serve the dashboard and openapi.yaml from this directory, for development",
        default: "the copy built in",
        documented: "the dashboard and `openapi.yaml` built into the binary; a directory serves them instead (development)")
    public static let insecureNoAuth = ServeSetting(
        "insecure-no-auth", .flag, "Allow a non-loopback address without a token", documented: "off")
    public static let allowPrivateNetworks = ServeSetting(
        "allow-private-networks", .onOff, "Let jobs reach loopback, private, link-local and other non-public addresses",
        default: "allowed on a loopback bind, refused otherwise", documented: "allowed on a loopback bind, refused on any other")
    public static let allowedHosts = ServeSetting(
        "allowed-hosts", value: "LIST", "Comma-separated Host names answered besides loopback ones",
        documented: "none (see [security.md](security.md#browsers))")
    public static let allowedOrigins = ServeSetting(
        "allowed-origins", value: "LIST",
        "Comma-separated origins of other sites whose pages may call /jsonrpc, such as http://ariang.example:6880",
        documented:
            "none: other sites' pages may not call `/jsonrpc`; listed origins (`http://ariang.example:6880`) may, with CORS ([aria2](aria2.md))"
    )
    public static let rpcAllowShutdown = ServeSetting(
        "rpc-allow-shutdown", .flag, "Let aria2.shutdown and aria2.forceShutdown stop the service gracefully",
        documented: "off: `aria2.shutdown` is refused; on, it stops the service gracefully")
    public static let maxConnections = ServeSetting(
        "max-connections", value: "N", .integer(16...1_000_000), "Open connections at most", default: "4096",
        documented: "`4096` (16 to 1,000,000)")
    public static let minFreeSpace = ServeSetting(
        "min-free-space", value: "BYTES", .bytes(minimum: 0), "Free space a download may not reserve, K/M/G suffixes allowed",
        default: "the smaller of 512M and 5% of the file system", documented: "the smaller of 512 MiB and 5 % of the file system")
    public static let webhook = ServeSetting(
        "webhook", value: "URL", "URL told (POST, JSON) when any job completes, fails or is removed",
        documented: "none (see [Webhooks](webhooks.md))")
    public static let webhookSecret = ServeSetting(
        "webhook-secret", value: "S",
        "Secret that signs webhook calls: Sluice-Signature: t=UNIX,v1=HMAC-SHA256(secret, \"t.BODY\")",
        documented: "none: calls are not signed")
    public static let webhookRetryFor = ServeSetting(
        "webhook-retry-for", value: "D", .duration(1...366 * 86400), "How long a failing webhook delivery is retried",
        default: "24h", documented: "`24h` (`90s`, `30m`, `7d`, ...)")
    public static let webhookRetention = ServeSetting(
        "webhook-retention", value: "D", .duration(1...366 * 86400),
        "How long a delivered or given-up webhook delivery is kept (its body holds the job's URL)", default: "7d",
        documented: "`7d`: how long a settled delivery is kept")
    public static let proxy = ServeSetting(
        "proxy", value: "URL",
        "Proxy for every download: http://[user:pass@]host:port or socks5://host:port; else https_proxy, http_proxy, all_proxy and no_proxy as curl reads them",
        documented: "none; else `https_proxy`, `http_proxy`, `all_proxy`, `no_proxy` (see [Proxies](proxies.md))")
    public static let maxConnectionsPerHost = ServeSetting(
        "max-connections-per-host", value: "N", .integer(1...1024), "Connections of all downloads to one host at once",
        default: "16", documented: "`16` (1 to 1024)")
    public static let store = ServeSetting(
        "store", value: "URL", "Job store shared by a cluster's nodes: postgres://user:password@host:port/database",
        default: "SQLite in the data directory",
        documented: "SQLite in `--data`; `postgres://user:password@host:port/db` makes this a node of a [cluster](cluster.md)")
    public static let nodeName = ServeSetting(
        "node-name", value: "NAME", "This node's name in a cluster, unique among its nodes", default: "the host name",
        documented: "the host name (a cluster's nodes need distinct names)")
    public static let lease = ServeSetting(
        "lease", value: "D", .duration(1...3600),
        "How long a node's claim on a job lasts unrenewed; a node silent longer loses its jobs to the others", default: "15s",
        documented: "`15s`: how long a node's claim on a job lasts unrenewed (1 s to 1 h)")
    public static let tlsCert = ServeSetting(
        "tls-cert", value: "FILE",
        "Serve every route over TLS (and HTTP/2) with this certificate chain, PEM, leaf first; SIGHUP reads it again",
        documented: "none: plain HTTP. With `--tls-key`, every route over TLS with HTTP/2; SIGHUP reloads them ([TLS](tls.md))")
    public static let tlsKey = ServeSetting(
        "tls-key", value: "FILE", "The private key of --tls-cert, PEM", documented: "none: the key of `--tls-cert`")
    public static let caFile = ServeSetting(
        "ca-file", value: "FILE",
        "PEM certificates downloads, webhooks and the store trust besides the system store, or SSL_CERT_FILE / SSL_CERT_DIR when set",
        documented:
            "none: outgoing TLS trusts the system store, or `SSL_CERT_FILE` / `SSL_CERT_DIR`, plus this PEM file ([TLS](tls.md))")
    public static let allowInsecureTLS = ServeSetting(
        "allow-insecure-tls", .flag, "Let a job set \"insecure\": true to skip verifying its server's certificate",
        documented: "off: a job's `\"insecure\": true` is refused (400)")
    public static let trustedKeys = ServeSetting(
        "trusted-keys", value: "DIR",
        "Keys a job's signatureUrl is checked against: *.asc and *.gpg OpenPGP keys (checked with gpgv), *.pub minisign keys",
        documented:
            "none: a job's `signatureUrl` is refused. OpenPGP keys (`*.asc`, `*.gpg`, checked with Debian's `gpgv`) and minisign keys (`*.pub`)"
    )
    public static let logLevel = ServeSetting(
        nil, key: "log-level", "Log level", default: "info", documented: "`info` (`trace`, `debug`, `notice`, `warning`, `error`)")

    public static let all: [ServeSetting] = [
        host, port, data, originRoot, maxActive, token, limitRate, schedule, publicDirectory, insecureNoAuth, allowPrivateNetworks,
        allowedHosts, allowedOrigins, rpcAllowShutdown, maxConnections, minFreeSpace, webhook, webhookSecret, webhookRetryFor,
        webhookRetention, proxy, maxConnectionsPerHost, store, nodeName, lease, tlsCert, tlsKey, caFile, allowInsecureTLS,
        trustedKeys, logLevel,
    ]

    /// The table of docs/settings.md.
    public static var markdownTable: String {
        (["| flag | env | default |", "|---|---|---|"] + all.map(\.documentationRow)).joined(separator: "\n")
    }
}
