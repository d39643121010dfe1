/// Turns names from headers and URLs into one safe file name, and checks names users give.
public enum FileNameSanitizer {
    /// The longest name kept, in UTF-8 bytes (file systems allow 255).
    public static let maximumLength = 200

    /// The longest name a file system takes, in UTF-8 bytes.
    public static let fileSystemLimit = 255

    /// Whether a user-supplied name is acceptable as it is: no `/`, `\`, NUL, C0 or C1
    /// control or invisible format character, not `.` or `..`, not empty, not too long.
    public static func isValid(_ name: String) -> Bool {
        SafeRelativePath.isPlainName(name) && name.utf8.count <= fileSystemLimit
            && !name.unicodeScalars.contains(where: isHidden)
    }

    /// C1 controls (U+0080–U+009F) and Unicode format characters (category Cf: the
    /// right-to-left override that turns `evil\u{202E}txt.exe` into "evilexe.txt" on screen,
    /// zero-width spaces, the BOM, soft hyphens), except the zero-width (non-)joiners that
    /// emoji sequences and several scripts need.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        if (0x80...0x9F).contains(scalar.value) { return true }
        if scalar.value == 0x200C || scalar.value == 0x200D { return false }
        return scalar.properties.generalCategory == .format
    }

    /// A safe name derived from untrusted text: path separators and control characters
    /// become `_`, leading dots and surrounding spaces are dropped, length is bounded.
    /// Nil when nothing usable is left.
    public static func sanitize(_ raw: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars {
            if isHidden(scalar) { continue }
            if scalar == "/" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F {
                scalars.append("_")
            } else {
                scalars.append(scalar)
            }
        }
        var name = String(scalars).trimmingSpaces().drop { $0 == "." || $0 == " " }
        while name.last == "." || name.last == " " { name = name.dropLast() }
        var result = String(name)
        if result.utf8.count > maximumLength {
            result = truncatePreservingExtension(result)
        }
        return isValid(result) && result.contains(where: { $0 != "_" }) ? result : nil
    }

    /// The name for a download: `Content-Disposition` (`filename*` first), else the last
    /// segment of the final URL's path, else `download`.
    public static func downloadName(contentDisposition: String?, urlPath: String) -> String {
        if let header = contentDisposition, let name = ContentDisposition.fileName(header), let safe = sanitize(name) {
            return safe
        }
        if let last = urlPath.split(separator: "/").last, let decoded = PercentDecoding.decode(last),
            let safe = sanitize(decoded)
        {
            return safe
        }
        return "download"
    }

    /// `name (n).ext`: the n-th alternative for a name that is taken. A `.tar.xx` double
    /// extension stays together. The stem is shortened (on a character boundary) so that
    /// the result still fits in 255 bytes, however long the name was.
    public static func numbered(_ name: String, _ number: Int) -> String {
        var (stem, ext) = splitExtension(name)
        let suffix = " (\(number))"
        if ext.utf8.count + suffix.utf8.count >= fileSystemLimit { ext = "" }
        let room = fileSystemLimit - suffix.utf8.count - ext.utf8.count
        var kept = ""
        for character in stem {
            if kept.utf8.count + character.utf8.count > room { break }
            kept.append(character)
        }
        if stem.utf8.count > room { stem = Substring(kept) }
        return "\(stem)\(suffix)\(ext)"
    }

    static func splitExtension(_ name: String) -> (stem: Substring, ext: Substring) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name[...], "") }
        let stem = name[..<dot]
        if stem.lowercased().hasSuffix(".tar"), let tarDot = stem.lastIndex(of: "."), tarDot != stem.startIndex {
            return (name[..<tarDot], name[tarDot...])
        }
        return (stem, name[dot...])
    }

    private static func truncatePreservingExtension(_ name: String) -> String {
        let (stem, ext) = splitExtension(name)
        let keep = ext.utf8.count < 32 ? ext : ""
        var truncated = ""
        for character in stem {
            if truncated.utf8.count + character.utf8.count + keep.utf8.count > maximumLength { break }
            truncated.append(character)
        }
        return truncated + keep
    }
}

/// The `filename` of a `Content-Disposition` header (RFC 6266), `filename*` (RFC 8187) first.
public enum ContentDisposition {
    public static func fileName(_ header: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in parameters(header) {
            switch parameter.name {
            case "filename*": extended = decodeExtended(parameter.value)
            case "filename": plain = parameter.value
            default: break
            }
        }
        return extended ?? plain
    }

    /// `UTF-8''na%C3%AFve.txt` → `naïve.txt`; other charsets are refused except ISO-8859-1.
    private static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        if charset == "utf-8" { return PercentDecoding.decode(parts[2]) }
        if charset == "iso-8859-1", let latin = PercentDecoding.decodeBytes(parts[2]) {
            return String(String.UnicodeScalarView(latin.map { Unicode.Scalar($0) }))
        }
        return nil
    }

    /// `attachment; filename="a;b.txt"; x=y` → [(filename, a;b.txt), (x, y)].
    private static func parameters(_ header: String) -> [(name: String, value: String)] {
        var result: [(String, String)] = []
        var scalars = Substring(header).unicodeScalars[...]
        // Skip the disposition type.
        guard let firstSemicolon = scalars.firstIndex(of: ";") else { return [] }
        scalars = scalars[scalars.index(after: firstSemicolon)...]
        while !scalars.isEmpty {
            let nameEnd = scalars.firstIndex(where: { $0 == "=" || $0 == ";" }) ?? scalars.endIndex
            let name = String(String.UnicodeScalarView(scalars[..<nameEnd])).trimmingSpaces().lowercased()
            guard nameEnd < scalars.endIndex, scalars[nameEnd] == "=" else {
                scalars = nameEnd < scalars.endIndex ? scalars[scalars.index(after: nameEnd)...] : scalars[scalars.endIndex...]
                continue
            }
            var rest = scalars[scalars.index(after: nameEnd)...]
            while rest.first == " " || rest.first == "\t" { rest = rest.dropFirst() }
            var value = String.UnicodeScalarView()
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let scalar = rest.first, scalar != "\"" {
                    rest = rest.dropFirst()
                    if scalar == "\\", let escaped = rest.first {
                        value.append(escaped)
                        rest = rest.dropFirst()
                    } else {
                        value.append(scalar)
                    }
                }
                rest = rest.dropFirst()
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[rest.endIndex...]
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                value.append(contentsOf: rest[..<end])
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[rest.endIndex...]
            }
            result.append((name, String(String(value).trimmingSpaces())))
            scalars = rest
        }
        return result
    }
}
