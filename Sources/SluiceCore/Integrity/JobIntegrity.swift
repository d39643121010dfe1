/// What a job is checked against beyond its digest, and what the checks found (CONTRACT.md
/// §8): where its checksum and signature come from, where the digest it expects came from,
/// and which key verified its signature. Stored with the job as one JSON text; most jobs
/// have none of it.
public struct JobIntegrity: Sendable, Equatable, Codable {
    /// A checksum file (`checksumUrl`) whose entry for the file gives the digest.
    public var checksumURL: String?
    /// The name to look up in that file, when it is not the URL's last path segment.
    public var checksumName: String?
    /// A detached signature (`signatureUrl`) of the checksum file, or of the file itself
    /// when there is no checksum file.
    public var signatureURL: String?
    /// Where the expected digest came from (`ExpectedSource`); nil with no digest.
    public var expectedSource: String?
    /// The signature's check, once made.
    public var signature: SignatureCheck?
    /// More URLs of the same file (`mirrors`), in the order given.
    public var mirrors: [String] = []
    /// What each source did, the primary first, as the last run left it; empty before one
    /// ran.
    public var sources: [SourceState] = []

    /// Where an expected digest came from, as `integrity.expected.source` shows it.
    public enum ExpectedSource {
        /// Given on create (`checksum`, `sha256`, aria2's `checksum` option).
        public static let checksum = "checksum"
        /// Read from the checksum file.
        public static let checksumURL = "checksumUrl"

        /// Announced by the remote in a header (`DigestHeaders.names`): the digest of the
        /// version it serves, learnt again by every run, never held against a new version.
        public static func isHeader(_ source: String?) -> Bool { source.map(DigestHeaders.names.contains) ?? false }
    }

    private enum CodingKeys: String, CodingKey {
        case checksumURL = "checksumUrl"
        case checksumName
        case signatureURL = "signatureUrl"
        case expectedSource, signature, mirrors, sources
    }

    public init(
        checksumURL: String? = nil, checksumName: String? = nil, signatureURL: String? = nil, expectedSource: String? = nil,
        signature: SignatureCheck? = nil
    ) {
        self.checksumURL = checksumURL
        self.checksumName = checksumName
        self.signatureURL = signatureURL
        self.expectedSource = expectedSource
        self.signature = signature
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        checksumURL = try container.decodeIfPresent(String.self, forKey: .checksumURL)
        checksumName = try container.decodeIfPresent(String.self, forKey: .checksumName)
        signatureURL = try container.decodeIfPresent(String.self, forKey: .signatureURL)
        expectedSource = try container.decodeIfPresent(String.self, forKey: .expectedSource)
        signature = try container.decodeIfPresent(SignatureCheck.self, forKey: .signature)
        mirrors = try container.decodeIfPresent([String].self, forKey: .mirrors) ?? []
        sources = try container.decodeIfPresent([SourceState].self, forKey: .sources) ?? []
    }

    public var isEmpty: Bool { self == JobIntegrity() }
}

/// A signature's check: its format, the trusted key that verified it (an OpenPGP
/// fingerprint, or a minisign key id in hexadecimal), and whether one did.
public struct SignatureCheck: Sendable, Equatable, Codable {
    public enum Format: String, Sendable, Codable {
        case openpgp, minisign
    }

    public var format: Format
    /// Nil when no trusted key verified it.
    public var key: String?
    public var verified: Bool

    public init(format: Format, key: String?, verified: Bool) {
        self.format = format
        self.key = key
        self.verified = verified
    }

    public var json: JSONValue {
        .object([("format", .string(format.rawValue)), ("key", JSONValue(key)), ("verified", .bool(verified))])
    }
}
