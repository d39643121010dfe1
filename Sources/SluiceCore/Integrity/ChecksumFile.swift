import Foundation

/// A checksum file as projects publish it (CONTRACT.md §8, `checksumUrl`): GNU coreutils'
/// lines (`HEX  NAME`, `HEX *NAME`, a `\` before a line whose name is escaped), BSD tags
/// (`SHA256 (NAME) = HEX`, what `sha256sum --tag` and Fedora's CHECKSUM files write),
/// OpenSSL's (`SHA256(NAME)= HEX`; OpenSSL 3 writes `SHA2-256(NAME)= HEX`), a bare digest, and
/// any of these inside an OpenPGP clear-signed message (Debian's and Fedora's; the signature
/// is checked apart, with `gpgv`). Lines of none of these are skipped, as `sha256sum -c` does.
public struct ChecksumFile: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// The file's name as the line gives it; nil for a bare digest.
        public var name: String?
        public var checksum: Checksum
    }

    public var entries: [Entry]
    /// The entries were inside an OpenPGP clear-signed message.
    public var clearSigned: Bool

    /// Larger than any published checksum file of one release (Debian's whole archive's
    /// `SHA256SUMS` for one image set is a few kilobytes): a larger answer is refused unread.
    public static let maximumBytes = 4 << 20
    /// At most this many entries are kept.
    public static let maximumEntries = 100_000

    /// Refused (`checksum_unavailable`) when it is larger than `maximumBytes`, a clear-signed
    /// message is cut, or no line is a checksum.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumBytes else {
            throw SluiceError(.checksumUnavailable, "the checksum file is larger than \(Self.maximumBytes) bytes")
        }
        guard !bytes.contains(0) else { throw SluiceError(.checksumUnavailable, "the checksum file is not text") }
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? $0.dropLast() : $0
        }
        clearSigned = lines.first { !$0.allSatisfy(\.isWhitespace) }?.trimmingWhitespace == "-----BEGIN PGP SIGNED MESSAGE-----"
        if clearSigned { lines = try Self.signedText(lines) }
        entries = []
        for line in lines {
            guard let entry = Self.entry(line) else { continue }
            entries.append(entry)
            if entries.count == Self.maximumEntries { break }
        }
        guard !entries.isEmpty else { throw SluiceError(.checksumUnavailable, "the checksum file has no checksum in a known layout") }
    }

    /// The digest for the file `name` (the last segment of the job's URL, or `checksumName`):
    /// the entry of that name, else of that last path segment (`./name`, `dir/name`), else a
    /// bare digest alone in the file; of several, the strongest algorithm's. Two entries of
    /// that algorithm that disagree name no digest.
    public func checksum(for name: String) throws -> Checksum {
        func lastSegment(_ path: String) -> Substring { path.split(separator: "/").last ?? Substring(path) }
        var candidates = entries.filter { $0.name.map { $0 == name || $0 == "./" + name } ?? false }
        if candidates.isEmpty { candidates = entries.filter { $0.name.map { lastSegment($0) == name } ?? false } }
        if candidates.isEmpty, entries.count == 1, entries[0].name == nil { candidates = entries }
        guard let strongest = candidates.map(\.checksum.algorithm.strength).max() else {
            throw SluiceError(.checksumUnavailable, "the checksum file has no entry for \(name) (\(entries.count) entries)")
        }
        let digests = Set(candidates.map(\.checksum).filter { $0.algorithm.strength == strongest })
        guard digests.count == 1, let digest = digests.first else {
            throw SluiceError(.checksumUnavailable, "the checksum file has \(digests.count) different digests for \(name)")
        }
        return digest
    }

    /// The text a clear-signed message signs (RFC 4880 §7): after its armor headers and the
    /// empty line, up to the signature, dash-escaped lines unescaped.
    static func signedText(_ lines: [Substring]) throws -> [Substring] {
        guard let start = lines.firstIndex(where: { $0.trimmingWhitespace == "-----BEGIN PGP SIGNED MESSAGE-----" }),
            let blank = lines[start...].firstIndex(where: { $0.allSatisfy(\.isWhitespace) }),
            let end = lines[blank...].firstIndex(where: { $0.trimmingWhitespace == "-----BEGIN PGP SIGNATURE-----" })
        else { throw SluiceError(.checksumUnavailable, "the checksum file's clear-signed message is cut short") }
        return lines[(blank + 1)..<end].map { $0.hasPrefix("- ") ? $0.dropFirst(2) : $0 }
    }

    /// One line's entry, in any of the layouts; nil for a line of none.
    static func entry(_ raw: Substring) -> Entry? {
        let line = raw.trimmingWhitespace
        guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
        return tagged(line) ?? coreutils(line)
    }

    /// `TAG (NAME) = HEX` (BSD) or `TAG(NAME)= HEX` (OpenSSL).
    static func tagged(_ line: Substring) -> Entry? {
        guard let open = line.firstIndex(of: "(") else { return nil }
        let tag = line[..<open].trimmingWhitespace
        guard let algorithm = Checksum.Algorithm(tag: tag) else { return nil }
        for close in [") = ", ")= "] {
            guard let range = line.range(of: close, options: .backwards), range.lowerBound > open else { continue }
            let name = String(line[line.index(after: open)..<range.lowerBound])
            guard let checksum = Checksum(algorithm, hex: line[range.upperBound...].trimmingWhitespace) else { return nil }
            return Entry(name: name, checksum: checksum)
        }
        return nil
    }

    /// `HEX  NAME`, `HEX *NAME` (one space tolerated), `\HEX  NAME` with `\\` and `\n` in the
    /// name, or `HEX` alone.
    static func coreutils(_ line: Substring) -> Entry? {
        let escaped = line.hasPrefix("\\")
        let body = escaped ? line.dropFirst() : line
        let hex = body.prefix { !$0.isWhitespace }
        guard let algorithm = Checksum.Algorithm(hexLength: hex.utf8.count), let checksum = Checksum(algorithm, hex: hex) else {
            return nil
        }
        var rest = body.dropFirst(hex.count)
        if rest.isEmpty { return Entry(name: nil, checksum: checksum) }
        guard rest.first == " " else { return nil }
        rest = rest.dropFirst()
        if rest.first == " " || rest.first == "*" { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        return Entry(name: escaped ? Self.unescaped(rest) : String(rest), checksum: checksum)
    }

    static func unescaped(_ name: Substring) -> String {
        var result = ""
        var iterator = name.makeIterator()
        while let character = iterator.next() {
            guard character == "\\" else {
                result.append(character)
                continue
            }
            switch iterator.next() {
            case "n": result.append("\n")
            case "r": result.append("\r")
            case "\\": result.append("\\")
            case let other?: result.append(contentsOf: ["\\", other])
            case nil: result.append("\\")
            }
        }
        return result
    }
}

extension Substring {
    var trimmingWhitespace: Substring {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return self[first...last]
    }
}
