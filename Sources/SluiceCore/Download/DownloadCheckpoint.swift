/// What survives a stop or a crash: enough to resume without refetching what is on disk,
/// and to refuse to mix bytes from two versions of the remote file.
public struct DownloadCheckpoint: Codable, Sendable, Equatable {
    /// The URL the user asked for.
    public var url: String
    /// Where redirects led; segments are fetched from here.
    public var finalURL: String?
    /// The validator of the first response: resumes send it in `If-Range`.
    public var validators: Validators?
    /// Nil when the server did not announce a length.
    public var totalBytes: Int64?
    public var acceptsRanges: Bool
    /// Byte ranges known to be on disk (and `fsync`ed before this checkpoint was saved).
    public var written: [WrittenRange]
    /// The name the file will get.
    public var fileName: String?
    /// The SHA-256 the remote announced for the file in `Repr-Digest` (RFC 9530), as
    /// lowercase hex: the finished file must have it, after a restart of the service too.
    /// Absent from checkpoints saved before Sluice asked for it, which decode as nil.
    public var announcedSHA256: String?
    /// Saved just before the verified file is placed: how to recognise it in its place if
    /// the process dies before the job is saved `completed`.
    public var placement: Placement?

    /// The verified partial file about to be placed: its identity on disk (placing is
    /// `link` or `rename`, which keep it), size and digest.
    public struct Placement: Codable, Sendable, Equatable {
        public var device: UInt64
        public var inode: UInt64
        public var size: Int64
        public var sha256: String
        public var fileName: String

        public init(device: UInt64, inode: UInt64, size: Int64, sha256: String, fileName: String) {
            self.device = device
            self.inode = inode
            self.size = size
            self.sha256 = sha256
            self.fileName = fileName
        }
    }

    public struct WrittenRange: Codable, Sendable, Equatable {
        public var start: Int64
        public var end: Int64

        public init(_ range: Range<Int64>) {
            start = range.lowerBound
            end = range.upperBound
        }

        public var range: Range<Int64> { start..<end }
    }

    public init(
        url: String, finalURL: String? = nil, validators: Validators? = nil, totalBytes: Int64? = nil,
        acceptsRanges: Bool = false, written: [Range<Int64>] = [], fileName: String? = nil, announcedSHA256: String? = nil
    ) {
        self.url = url
        self.finalURL = finalURL
        self.validators = validators
        self.totalBytes = totalBytes
        self.acceptsRanges = acceptsRanges
        self.written = written.map(WrittenRange.init)
        self.fileName = fileName
        self.announcedSHA256 = announcedSHA256
    }

    public var writtenRanges: [Range<Int64>] { written.map(\.range) }

    public var writtenBytes: Int64 { written.reduce(0) { $0 + $1.end - $1.start } }

    /// Whether what was on disk can be reused: ranges, a known length and a strong
    /// validator to send in `If-Range` are all needed.
    public var isResumable: Bool {
        acceptsRanges && totalBytes != nil && validators?.ifRangeValue != nil
    }
}
