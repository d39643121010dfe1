/// The digests a response announces for the whole file (CONTRACT.md §8): `Repr-Digest`
/// (RFC 9530: `sha-256`, `sha-512`), `Digest` (RFC 3230's instance digest: `SHA-256`,
/// `SHA-512`, `SHA`, `MD5`), `Content-MD5` (of the body: only when the body is the whole
/// file), `x-goog-hash`'s `md5` (Google Cloud Storage) and `x-amz-checksum-sha256` (S3, not
/// its `-N` composite of parts). A value that does not parse, or is not its algorithm's
/// length, is not an announcement: a garbled header never fails a download.
public enum DigestHeaders {
    public struct Announced: Sendable, Equatable {
        public var checksum: Checksum
        /// The header, lower-case: what `integrity.expected.source` shows.
        public var header: String

        public init(checksum: Checksum, header: String) {
            self.checksum = checksum
            self.header = header
        }

        /// As a message names it: `Repr-Digest`, `x-goog-hash`.
        public var shownHeader: String { DigestHeaders.shown[header] ?? header }
    }

    /// The headers read, lower-case, as `integrity.expected.source` names them.
    public static let names = Set(shown.keys)
    /// Each header as a message names it, by its lower-case name.
    static let shown = [
        "repr-digest": "Repr-Digest", "digest": "Digest", "content-md5": "Content-MD5", "x-goog-hash": "x-goog-hash",
        "x-amz-checksum-sha256": "x-amz-checksum-sha256",
    ]

    /// What a response's headers (`values(name)`: every field line of a name) announce;
    /// `wholeBody` when its body is the whole file (a 200, or a 206 of every byte).
    public static func announced(_ values: (String) -> [String], wholeBody: Bool) -> [Announced] {
        var found: [Announced] = []
        func add(_ algorithm: Checksum.Algorithm, _ bytes: [UInt8]?, _ header: String) {
            guard let bytes, bytes.count * 2 == algorithm.hexLength, let checksum = Checksum(algorithm, hex: FileDigest.hex(bytes)) else {
                return
            }
            found.append(Announced(checksum: checksum, header: header))
        }
        let repr = values("Repr-Digest")
        if !repr.isEmpty, let dictionary = StructuredDictionary(parsing: repr.joined(separator: ", ")) {
            for (key, algorithm) in [("sha-256", Checksum.Algorithm.sha256), ("sha-512", .sha512)] {
                if case .bytes(let bytes)? = dictionary[key] { add(algorithm, bytes, "repr-digest") }
            }
        }
        for (name, value) in pairs(values("Digest")) {
            let algorithms: [String: Checksum.Algorithm] = ["sha-256": .sha256, "sha-512": .sha512, "sha": .sha1, "md5": .md5]
            if let algorithm = algorithms[name] { add(algorithm, Base64.decode(value), "digest") }
        }
        if wholeBody, let value = values("Content-MD5").first, values("Content-MD5").count == 1 {
            add(.md5, Base64.decode(value.trimmingSpaces()), "content-md5")
        }
        for (name, value) in pairs(values("x-goog-hash")) where name == "md5" { add(.md5, Base64.decode(value), "x-goog-hash") }
        if let value = values("x-amz-checksum-sha256").first, !value.contains("-") {
            add(.sha256, Base64.decode(value.trimmingSpaces()), "x-amz-checksum-sha256")
        }
        return found
    }

    /// `name=value` items of comma-separated field values, names lower-cased. A value is
    /// base64, which may end in `=`: the split is at the first `=`.
    static func pairs(_ lines: [String]) -> [(String, String)] {
        lines.flatMap { $0.split(separator: ",") }.compactMap { item in
            guard let equals = item.firstIndex(of: "=") else { return nil }
            let name = item[..<equals].trimmingSpaces().lowercased()
            return (name, String(item[item.index(after: equals)...].trimmingSpaces()))
        }
    }
}
