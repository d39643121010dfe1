public import SluiceCore

/// How one download is fetched.
public struct DownloadOptions: Sendable {
    /// Parallel Range connections, 1...16.
    public var connections: Int
    /// Extra request headers (cookies, authorization for the remote).
    public var headers: [String: String]
    /// The digest the finished file must have (`checksum`: SHA-256, SHA-512, SHA-1 or MD5).
    public var expectedChecksum: Checksum?
    /// Where the digest comes from when `expectedChecksum` is nil: a checksum file read
    /// before the file's first byte (`checksumUrl`, CONTRACT.md §8).
    public var integritySources: IntegritySources? = nil
    /// The digest an earlier run learnt from the remote's headers: checked on the file if
    /// this run resumes the same version; a run that starts over learns it again.
    public var announced: IntegrityFinding? = nil
    /// The origin a job's credentials (`Authorization`, `Cookie`) may go to, when it is not
    /// this download's URL's: the job's own URL, for a download from one of its mirrors.
    public var credentialsOrigin: String? = nil
    /// What an earlier source of the job said of the file: this download's source is used
    /// only when its first answer agrees (`SourceDisagrees` when not).
    public var agreeWith: SourceAgreement? = nil
    /// More URLs of the same file: with a digest expected, the connections are spread over
    /// those that agree with the primary; without one, each is tried in turn when the one
    /// before fails (`MirroredDownload`).
    public var mirrors: [String] = []
    /// `expectedChecksum`'s hexadecimal digits when it is a SHA-256.
    public var expectedSHA256: String? { expectedChecksum?.algorithm == .sha256 ? expectedChecksum?.hex : nil }
    public var retry: RetryPolicy
    /// A connection that delivers no byte for this long has stalled (seconds).
    public var stallTimeout: Double
    /// How often progress is checkpointed (seconds).
    public var checkpointInterval: Double
    /// How often progress is published (seconds).
    public var progressInterval: Double
    /// Segments smaller than this are not split between connections.
    public var minimumSplit: Int64
    /// Reserve the file's full length before writing.
    public var preallocate: Bool
    /// Free space a reservation must leave (nil: the smaller of 512 MiB and 5 % of the
    /// file system).
    public var minimumFreeSpace: Int64?
    /// A byte rate shared with other downloads.
    public var rateLimiter: RateLimiter?
    /// A wait at least this long is not slept through: the download stops with
    /// `RetryLater` and gives its slot back (nil: always sleep, as `sluice get` does).
    public var releaseSlotAfter: Duration? = nil
    /// Consecutive failures of earlier runs, which this one goes on counting.
    public var priorFailures: Int = 0
    /// Waits between tries and measures stalls (tests pass a faster one).
    public var clock: ElapsedClock = .continuous
    /// A connection that brings less than this many bytes per second over `stallWindow`
    /// is replaced (a trickle never trips the silence rule).
    public var minimumRate: Int64 = 1024
    public var stallWindow: Duration = .seconds(30)
    /// Without a checkpoint, continue a partial file some other program left from its
    /// size (`curl -C -`, `wget -c`), instead of starting over.
    public var continuePartial: Bool = false
    /// This download's own proxy, instead of the one the fetcher's settings choose.
    public var proxy: EndpointURL? = nil
    /// Skip certificate verification (`-k`, a job's `insecure` where the service allows it).
    public var insecure: Bool = false
    /// Connections to one host shared with other downloads; nil for no cap but `connections`.
    public var hostConnections: HostConnections? = nil
    /// The download has never run: its store holds no checkpoint, and is not asked for one.
    public var neverRun: Bool = false

    public init(
        connections: Int = 4, headers: [String: String] = [:], expectedSHA256: String? = nil, expectedChecksum: Checksum? = nil,
        retry: RetryPolicy = RetryPolicy(), stallTimeout: Double = 30, checkpointInterval: Double = 2,
        progressInterval: Double = 0.25, minimumSplit: Int64 = 1 << 20, preallocate: Bool = true,
        rateLimiter: RateLimiter? = nil
    ) {
        self.connections = min(16, max(1, connections))
        self.headers = headers
        self.expectedChecksum = expectedChecksum ?? expectedSHA256.flatMap { Checksum(.sha256, hex: $0) }
        self.retry = retry
        self.stallTimeout = stallTimeout
        self.checkpointInterval = checkpointInterval
        self.progressInterval = progressInterval
        self.minimumSplit = minimumSplit
        self.preallocate = preallocate
        self.rateLimiter = rateLimiter
    }
}

/// The documents beside a file that say what it must be (CONTRACT.md §8).
public struct IntegritySources: Sendable, Equatable {
    /// A checksum file, in any layout `ChecksumFile` reads.
    public var checksumURL: String?
    /// The name to look up in it; nil for the last path segment of the file's URL.
    public var checksumName: String?
    /// A detached signature of the checksum file, or of the file when there is none.
    public var signatureURL: String?
    /// The operator's keys a signature is checked against.
    public var keys: TrustedKeys?

    public init(checksumURL: String? = nil, checksumName: String? = nil, signatureURL: String? = nil, keys: TrustedKeys? = nil) {
        self.checksumURL = checksumURL
        self.checksumName = checksumName
        self.signatureURL = signatureURL
        self.keys = keys
    }
}

/// The outcome of a finished download.
public struct DownloadResult: Sendable, Equatable {
    /// Where the verified file is now.
    public var path: String
    public var fileName: String
    public var sha256: String
    public var bytes: Int64

    public init(path: String, fileName: String, sha256: String, bytes: Int64) {
        self.path = path
        self.fileName = fileName
        self.sha256 = sha256
        self.bytes = bytes
    }
}
