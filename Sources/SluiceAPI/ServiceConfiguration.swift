import SluiceCore

/// Everything `sluice serve` is configured with, already resolved from flags, the
/// environment and defaults.
public struct ServiceConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Holds `cache/`, `documents/` and the job store.
    public var dataDirectory: String
    /// The directory `/files/` serves.
    public var originRoot: String
    public var maxActive: Int
    public var token: String?
    public var limitRate: Int64?
    /// The dashboard's files; nil serves no dashboard.
    public var publicDirectory: String?
    public var retry: RetryPolicy
    public var stallTimeout: Double

    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String = "./sluice-data",
        originRoot: String? = nil, maxActive: Int = 3, token: String? = nil, limitRate: Int64? = nil,
        publicDirectory: String? = nil, retry: RetryPolicy = RetryPolicy(), stallTimeout: Double = 30
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.originRoot = originRoot ?? dataDirectory + "/documents"
        self.maxActive = maxActive
        self.token = token
        self.limitRate = limitRate
        self.publicDirectory = publicDirectory
        self.retry = retry
        self.stallTimeout = stallTimeout
    }

    public var cacheDirectory: String { dataDirectory + "/cache" }
    public var documentsDirectory: String { dataDirectory + "/documents" }
}
