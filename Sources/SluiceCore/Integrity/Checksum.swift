/// An expected digest of a file (CONTRACT.md §8): `checksum` is `ALGO=HEX`, in aria2's
/// spelling of the algorithm (`sha-256`, `sha-512`, `sha-1`, `md5`), the digest in hexadecimal.
public struct Checksum: Sendable, Hashable, CustomStringConvertible {
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"
        case sha1 = "sha-1"
        case md5

        /// Hexadecimal digits of a digest.
        public var hexLength: Int {
            switch self {
            case .sha256: 64
            case .sha512: 128
            case .sha1: 40
            case .md5: 32
            }
        }

        /// As messages name it: `SHA-256`, `MD5`.
        public var displayName: String { rawValue.uppercased() }

        /// Which of two digests of one file to check: the stronger.
        public var strength: Int {
            switch self {
            case .sha512: 4
            case .sha256: 3
            case .sha1: 2
            case .md5: 1
            }
        }

        /// The algorithm a checksum file's tag names: BSD's `SHA256`, OpenSSL 3's `SHA2-256`,
        /// `SHA512`, `SHA1`, `MD5` (any case); nil for another.
        public init?(tag: some StringProtocol) {
            switch tag.uppercased() {
            case "SHA256", "SHA2-256", "SHA-256": self = .sha256
            case "SHA512", "SHA2-512", "SHA-512": self = .sha512
            case "SHA1", "SHA-1": self = .sha1
            case "MD5": self = .md5
            default: return nil
            }
        }

        /// The algorithm a bare digest of this many hexadecimal digits is (what `sha256sum`,
        /// `sha512sum`, `sha1sum` and `md5sum` write carries no name).
        public init?(hexLength: Int) {
            guard let algorithm = Self.allCases.first(where: { $0.hexLength == hexLength }) else { return nil }
            self = algorithm
        }
    }

    public let algorithm: Algorithm
    /// Lowercase hexadecimal, `algorithm.hexLength` digits.
    public let hex: String

    /// Nil unless `hex` is `algorithm.hexLength` hexadecimal digits (either case).
    public init?(_ algorithm: Algorithm, hex: some StringProtocol) {
        guard hex.utf8.count == algorithm.hexLength, hex.utf8.allSatisfy(Self.isHexDigit) else { return nil }
        self.algorithm = algorithm
        self.hex = hex.lowercased()
    }

    /// `checksum`'s value, `ALGO=HEX`: refused naming `field` and what is wrong.
    public init(parsing text: String, field: String = "checksum") throws {
        let names = Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
        guard let equals = text.firstIndex(of: "="), let algorithm = Algorithm(rawValue: text[..<equals].lowercased()) else {
            throw SluiceError(.invalidField, "\(field) must be ALGO=HEX, ALGO one of \(names)", field: field)
        }
        guard let checksum = Checksum(algorithm, hex: text[text.index(after: equals)...]) else {
            throw SluiceError(
                .invalidField, "\(field): a \(algorithm.rawValue) digest is \(algorithm.hexLength) hexadecimal digits", field: field)
        }
        self = checksum
    }

    /// `ALGO=HEX`, as `checksum` takes it.
    public var description: String { "\(algorithm.rawValue)=\(hex)" }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }
}
