public import DownloadEngine
import Foundation
public import SluiceCore

extension JobScheduler {
    /// What the runner is configured with (`ServiceConfiguration` gives it its part).
    public struct Configuration: Sendable {
        public var cacheDirectory: String
        public var documentsDirectory: String
        public var maxActive: Int
        public var retry: RetryPolicy
        public var stallTimeout: Double
        public var limitRate: Int64?
        /// Free space a download's reservation must leave; nil for the default rule.
        public var minFreeSpace: Int64?
        /// A remote's wait at least this long gives the job's slot to another while it waits.
        public var releaseSlotAfter: Duration = .seconds(30)
        /// Waits, rates and stalls are measured on this clock (tests pass a faster one).
        public var clock: ElapsedClock = .continuous
        /// Connections to one host across all downloads (`--max-connections-per-host`).
        public var hostConnections: HostConnections?
        /// This node's name (`--node-name`): the owner of its leases in a cluster.
        public var nodeName: String = ProcessInfo.processInfo.hostName
        /// Whether a job may skip certificate verification (`--allow-insecure-tls`).
        public var allowInsecureTLS = false
        /// The operator's keys a job's `signatureUrl` is checked against (`--trusted-keys`).
        public var trustedKeys: TrustedKeys?
        /// The longest a pause waits for a run to stop before it answers anyway (a run that
        /// is placing its file is waited for to its end). Real time: it bounds a request. A
        /// stop ends on its last checkpoint's store write, whose own deadline is 10 s; under
        /// the PostgreSQL test pass's load stops took up to 3 s.
        public var settleLimit: Duration = .seconds(15)
        /// What a command, or the service's own work, may spend waiting on the store
        /// (`StoreCallBudget`): 2 s (docs/job-service.md, "Store calls") unless a test pass
        /// sets more.
        public var storeBudget: Duration = StoreCallBudget.request
        /// `serve --schedule FILE`: put in effect, and stored, at start; nil keeps the stored one.
        public var schedule: Schedule?

        public init(
            cacheDirectory: String, documentsDirectory: String, maxActive: Int = 3, retry: RetryPolicy = RetryPolicy(),
            stallTimeout: Double = 30, limitRate: Int64? = nil, minFreeSpace: Int64? = nil
        ) {
            self.cacheDirectory = cacheDirectory
            self.documentsDirectory = documentsDirectory
            self.maxActive = maxActive
            self.retry = retry
            self.stallTimeout = stallTimeout
            self.limitRate = limitRate
            self.minFreeSpace = minFreeSpace
        }
    }
}
