import Foundation
import SluiceCore
import Testing

/// Issue 21: the OpenAPI `filename` pattern let C1 controls and invisible format characters
/// through, which the service refuses (400 `invalid_filename`): a fuzzer following the
/// document was refused. The pattern and the service now agree on every character of the
/// Basic Multilingual Plane.
@Suite struct FileNamePatternTests {
    static func documentsPattern() throws -> NSRegularExpression {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../public/openapi.yaml")
        let text = try String(contentsOf: document, encoding: .utf8)
        // The one pattern of a plain name: no `/` and no `\` first.
        let line = try #require(text.split(separator: "\n").first { $0.contains(#"pattern: '^[^/\\"#) })
        let quoted = line.split(separator: "'", maxSplits: 1)[1].dropLast()
        return try NSRegularExpression(pattern: String(quoted).replacingOccurrences(of: "''", with: "'"))
    }

    @Test func theDocumentsFilenamePatternIsTheServicesRule() throws {
        let pattern = try Self.documentsPattern()
        var disagreements: [String] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let name = "a" + String(Character(scalar)) + "b"
            let range = NSRange(name.startIndex..., in: name)
            let matches = pattern.firstMatch(in: name, range: range) != nil
            if matches != FileNameSanitizer.isValid(name) { disagreements.append(String(value, radix: 16)) }
        }
        #expect(disagreements.isEmpty, "U+\(disagreements.prefix(20).joined(separator: ", U+"))")
    }
}
