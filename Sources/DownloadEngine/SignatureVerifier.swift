import Crypto
import Foundation
import NIOPosix
import SluiceCore

/// Checks a detached signature against the operator's keys (CONTRACT.md §8): minisign in
/// process (Ed25519 from swift-crypto, over the BLAKE2b-512 of what is signed or, for a
/// legacy signature, over the bytes themselves, and over the trusted comment), OpenPGP
/// through `gpgv`, as apt checks its archives. A signature no trusted key verifies is a
/// check with `verified` false, not an error: the caller fails the job with it.
enum SignatureVerifier {
    /// What is signed: bytes in memory (a checksum file) or a file on disk (the download).
    enum Signed: Sendable {
        case bytes([UInt8])
        case file(PartialFile, length: Int64)
    }

    /// A legacy minisign signature signs the file itself, which must then be read whole into
    /// memory: files larger than this are refused (minisign 0.10 and later prehash).
    static let legacyMaximumBytes: Int64 = 256 << 20

    static func check(_ signature: [UInt8], of signed: Signed, keys: TrustedKeys) async throws -> SignatureCheck {
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
        case .file(let file, let length):
            if signature.prehashed {
                message = try await FileDigests.fold(
                    file, length: length, start: { BLAKE2b() }, update: { $0.update($1) }, finish: { $0.finalize() })
            } else {
                guard length <= legacyMaximumBytes else {
                    throw SluiceError(
                        .signatureInvalid,
                        "a legacy minisign signature (Ed) is checked on files up to \(legacyMaximumBytes >> 20) MiB: sign with minisign 0.10 or later"
                    )
                }
                message = try await FileDigests.fold(file, length: length, start: { [UInt8]() }, update: { $0 += $1 }, finish: { $0 })
            }
        }
        let verified =
            publicKey.isValidSignature(signature.signature, for: message)
            && publicKey.isValidSignature(signature.globalSignature, for: signature.globallySigned)
        return SignatureCheck(format: .minisign, key: verified ? key.idText : nil, verified: verified)
    }
}
