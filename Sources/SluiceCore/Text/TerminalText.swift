/// Text from a remote or from the service made safe to print on a terminal, as `ls -b` and
/// `git` print names: every control character (C0, DEL, C1) and every character that
/// reorders or hides text (bidirectional controls, the line and paragraph separators) is
/// shown escaped (`\e`, `\n`, `\x7f`, `\u{202e}`), so no escape sequence reaches the
/// terminal (a retitle, a cleared screen, a rewritten line) and what is printed is what was
/// sent.
public enum TerminalText {
    /// `text` with every unsafe character escaped; `keeping` lists characters left as they
    /// are (a multi-line message's `\n`, a table's `\t`).
    public static func escaped(_ text: some StringProtocol, keeping: Set<Unicode.Scalar> = []) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if keeping.contains(scalar) {
                output.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\u{1B}": output += "\\e"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if isUnsafe(scalar) {
                    output += scalar.value <= 0xFF ? "\\x" + hex(scalar.value, digits: 2) : "\\u{" + hex(scalar.value, digits: 4) + "}"
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }

    /// `text` unchanged when it has nothing unsafe (no copy in the common case), else escaped.
    public static func safe(_ text: String, keeping: Set<Unicode.Scalar> = []) -> String {
        let clean = text.unicodeScalars.allSatisfy { keeping.contains($0) || !isUnsafe($0) }
        return clean ? text : escaped(text, keeping: keeping)
    }

    /// JSON text made safe the JSON way: an unsafe character (which JSON allows raw inside a
    /// string: C1 controls, U+2028, bidirectional controls) becomes `\uXXXX`, the same
    /// string to a JSON reader. A JSON document never holds one outside a string.
    /// JSON's own whitespace between values (`\n`, `\r`, `\t`) is left as it is.
    public static func safeJSON(_ text: String) -> String {
        let whitespace: Set<Unicode.Scalar> = ["\n", "\r", "\t"]
        func unsafe(_ scalar: Unicode.Scalar) -> Bool { isUnsafe(scalar) && !whitespace.contains(scalar) }
        guard text.unicodeScalars.contains(where: unsafe) else { return text }
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if unsafe(scalar) {
                output += "\\u" + hex(scalar.value, digits: 4)
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// Whether a terminal would act on `scalar` rather than show it.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional embeddings, overrides and isolates; the line and paragraph separators.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
