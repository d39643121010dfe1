/// A moment of a download, published to the CLI's progress bar and the jobs API.
public struct DownloadProgress: Sendable, Equatable {
    public enum Phase: String, Sendable, Equatable {
        case probing, downloading, retrying, verifying, finished
    }

    public var phase: Phase
    /// Bytes on disk, never more than `bytesTotal`.
    public var bytesDone: Int64
    /// Nil while the size is unknown.
    public var bytesTotal: Int64?
    /// Bytes per second over a moving window.
    public var speed: Double
    /// Seconds left; nil when unknown.
    public var eta: Double?
    public var resumable: Bool
    public var fileName: String?
    /// The connections fetching right now.
    public var activeConnections: Int
    /// What the run learnt of the digest and signature the file must have; nil for nothing.
    public var integrity: IntegrityFinding?
    /// What each source brought, the primary first, when the download has mirrors.
    public var sources: [SourceState]?

    public init(
        phase: Phase, bytesDone: Int64 = 0, bytesTotal: Int64? = nil, speed: Double = 0, eta: Double? = nil,
        resumable: Bool = false, fileName: String? = nil, activeConnections: Int = 0, integrity: IntegrityFinding? = nil
    ) {
        self.phase = phase
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.speed = speed
        self.eta = eta
        self.resumable = resumable
        self.fileName = fileName
        self.activeConnections = activeConnections
        self.integrity = integrity
    }

    /// 0...1, nil while the size is unknown.
    public var fraction: Double? {
        guard let bytesTotal else { return nil }
        return bytesTotal == 0 ? 1 : min(1, Double(bytesDone) / Double(bytesTotal))
    }
}
