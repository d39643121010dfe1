import Crypto
import Foundation
import NIOPosix
public import SluiceCore

/// Checks a detached signature against the operator's keys (CONTRACT.md §8): minisign in
/// process (Ed25519 from swift-crypto, over the BLAKE2b-512 of what is signed or, for a
/// legacy signature, over the bytes themselves, and over the trusted comment), OpenPGP
/// through `gpgv`, as apt checks its archives. A signature no trusted key verifies is a
/// check with `verified` false, not an error: the caller fails the job with it.
public enum SignatureVerifier {
    /// What is signed: bytes in memory (a checksum file) or a file on disk (the download).
    public enum Signed: Sendable {
        case bytes([UInt8])
        case file(path: String, length: Int64)
    }

    /// A legacy minisign signature signs the file itself, which must then be read whole into
    /// memory: files larger than this are refused (minisign 0.10 and later prehash).
    public static let legacyMaximumBytes: Int64 = 256 << 20

    public static func check(_ signature: [UInt8], of signed: Signed, keys: TrustedKeys) async throws -> SignatureCheck {
        if let minisign = try? Minisign.Signature(parsing: signature) {
            return try await check(minisign, of: signed, keys: keys)
        }
        guard let keyring = keys.keyring, let gpgv = keys.gpgv else {
            throw SluiceError(
                .signatureInvalid, "the signature is not minisign's, and the service has no OpenPGP key to check it with")
        }
        return try await GPGV.check(signature, of: signed, keyring: keyring, gpgv: gpgv)
    }

    static func check(_ signature: Minisign.Signature, of signed: Signed, keys: TrustedKeys) async throws -> SignatureCheck {
        guard let key = keys.minisign.first(where: { $0.keyID == signature.keyID }),
            let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: key.key)
        else { return SignatureCheck(format: .minisign, key: nil, verified: false) }
        let message: [UInt8]
        switch signed {
        case .bytes(let bytes):
            message = signature.prehashed ? BLAKE2b.hash(bytes) : bytes
        case .file(let path, let length):
            if signature.prehashed {
                message = try await blake2b(path: path, length: length)
            } else {
                guard length <= legacyMaximumBytes else {
                    throw SluiceError(
                        .signatureInvalid,
                        "a legacy minisign signature (Ed) is checked on files up to \(legacyMaximumBytes >> 20) MiB: sign with minisign 0.10 or later"
                    )
                }
                guard let data = FileManager.default.contents(atPath: path), Int64(data.count) >= length else {
                    throw SluiceError(.io, "the downloaded file cannot be read to check its signature")
                }
                message = Array(data.prefix(Int(length)))
            }
        }
        let verified =
            publicKey.isValidSignature(signature.signature, for: message)
            && publicKey.isValidSignature(signature.globalSignature, for: signature.globallySigned)
        return SignatureCheck(format: .minisign, key: verified ? key.idText : nil, verified: verified)
    }

    /// The BLAKE2b-512 of a file's first `length` bytes, read on the hashing pool.
    static func blake2b(path: String, length: Int64) async throws -> [UInt8] {
        try await DataPlane.hashingPool.runIfActive {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw SluiceError(.io, "the downloaded file cannot be read to check its signature")
            }
            defer { try? handle.close() }
            var hasher = BLAKE2b()
            var left = length
            while left > 0 {
                guard let chunk = try handle.read(upToCount: Int(min(left, 1 << 20))), !chunk.isEmpty else {
                    throw SluiceError(.io, "the downloaded file is shorter than \(length) bytes")
                }
                chunk.withUnsafeBytes { hasher.update($0) }
                left -= Int64(chunk.count)
            }
            return hasher.finalize()
        }
    }
}
