/// minisign's files (https://jedisct1.github.io/minisign/): a public key and a signature,
/// read into their parts; the Ed25519 checks are the engine's (`SignatureVerifier`).
///
/// A public key is an optional `untrusted comment:` line and base64 of `Ed`, an 8-byte key
/// id and the 32-byte key. A signature is a comment line, base64 of the algorithm (`Ed`
/// signs the file itself, `ED` its BLAKE2b-512), the key id and the 64-byte signature, then a
/// `trusted comment:` line and base64 of the 64-byte signature of signature + that comment.
public enum Minisign {
    /// What a refusal of a key or signature file says.
    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public struct PublicKey: Sendable, Equatable {
        public var keyID: [UInt8]
        public var key: [UInt8]

        public init(parsing text: String) throws {
            let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace }.filter { !$0.isEmpty }
            guard let line = lines.first(where: { !$0.hasPrefix("untrusted comment:") }), let bytes = Base64.decode(line),
                bytes.count == 42, bytes[0] == UInt8(ascii: "E"), bytes[1] == UInt8(ascii: "d")
            else { throw Malformed(description: "not a minisign public key") }
            keyID = Array(bytes[2..<10])
            key = Array(bytes[10..<42])
        }

        /// The key id as minisign prints it: upper-case hexadecimal, no leading zeros.
        public var idText: String { Minisign.idText(keyID) }
    }

    public struct Signature: Sendable, Equatable {
        /// Whether the file's BLAKE2b-512 is signed (`ED`, minisign's default since 0.10)
        /// rather than the file itself (`Ed`).
        public var prehashed: Bool
        public var keyID: [UInt8]
        public var signature: [UInt8]
        public var trustedComment: String
        public var globalSignature: [UInt8]

        /// At most this many bytes are read of a signature file.
        public static let maximumBytes = 64 << 10

        public init(parsing bytes: [UInt8]) throws {
            guard bytes.count <= Self.maximumBytes, !bytes.contains(0) else { throw Malformed(description: "not a minisign signature") }
            let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace }
                .filter { !$0.isEmpty }
            var rest = lines[...]
            if rest.first?.hasPrefix("untrusted comment:") == true { rest = rest.dropFirst() }
            guard rest.count == 3, let signatureBytes = Base64.decode(rest[rest.startIndex]), signatureBytes.count == 74,
                signatureBytes[0] == UInt8(ascii: "E"), [UInt8(ascii: "d"), UInt8(ascii: "D")].contains(signatureBytes[1]),
                rest[rest.startIndex + 1].hasPrefix("trusted comment: "),
                let global = Base64.decode(rest[rest.startIndex + 2]), global.count == 64
            else { throw Malformed(description: "not a minisign signature") }
            prehashed = signatureBytes[1] == UInt8(ascii: "D")
            keyID = Array(signatureBytes[2..<10])
            signature = Array(signatureBytes[10..<74])
            trustedComment = String(rest[rest.startIndex + 1].dropFirst("trusted comment: ".count))
            globalSignature = global
        }

        /// What the global signature signs: the signature, then the trusted comment.
        public var globallySigned: [UInt8] { signature + Array(trustedComment.utf8) }
    }

    /// minisign prints a key id as the 64-bit little-endian number it holds, in upper-case
    /// hexadecimal without leading zeros (`%PRIX64`).
    static func idText(_ keyID: [UInt8]) -> String {
        let number = keyID.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return String(number, radix: 16, uppercase: true)
    }
}
