import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority of the tests' own, and leaf certificates it issues, written as
/// PEM files: what a company or home-lab CA looks like to a client. Made with
/// swift-certificates, so no `openssl` is needed and no test shares a key with another.
public struct TestCertificateAuthority: Sendable {
    /// Where the files are written.
    public let directory: String
    /// The CA's certificate (PEM): what `--cacert` / `--ca-file` / `SSL_CERT_FILE` name.
    public let certificateFile: String
    let name: DistinguishedName
    /// The CA's private key, as its raw bytes (the key type is not `Sendable`).
    let keyBytes: Data
    var key: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: keyBytes) }

    /// A certificate and its key, as files.
    public struct Pair: Sendable {
        public let certificateFile: String
        public let keyFile: String

        public init(certificateFile: String, keyFile: String) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    /// A new CA named `commonName`, valid from an hour ago for 30 days, written to
    /// `directory/NAME-ca.pem`.
    public init(directory: String, commonName: String = "Sluice Test CA") throws {
        self.directory = directory
        let key = P256.Signing.PrivateKey()
        keyBytes = key.rawRepresentation
        name = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("Sluice tests")
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 30 * 86400, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(key)
        )
        certificateFile = directory + "/" + Self.fileName(commonName) + "-ca.pem"
        try certificate.serializeAsPEM().pemString.write(toFile: certificateFile, atomically: true, encoding: .utf8)
    }

    /// A server (and client) certificate for `dnsNames` and `addresses`, issued by this CA
    /// (or by itself, `selfSigned`), valid between the two dates; written as
    /// `directory/FILE.pem` and `directory/FILE-key.pem`.
    public func issue(
        _ file: String, dnsNames: [String] = ["localhost"], addresses: [[UInt8]] = [[127, 0, 0, 1]],
        notValidBefore: Date = Date() - 3600, notValidAfter: Date = Date() + 7 * 86400, selfSigned: Bool = false
    ) throws -> Pair {
        let leafKey = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CommonName(dnsNames.first ?? "sluice-test")
            OrganizationName("Sluice tests")
        }
        var names: [GeneralName] = dnsNames.map { .dnsName($0) }
        names += addresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
            notValidBefore: notValidBefore, notValidAfter: notValidAfter, issuer: selfSigned ? subject : name,
            subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: .init(selfSigned ? leafKey : key)
        )
        let pair = Pair(certificateFile: directory + "/\(file).pem", keyFile: directory + "/\(file)-key.pem")
        try certificate.serializeAsPEM().pemString.write(toFile: pair.certificateFile, atomically: true, encoding: .utf8)
        try leafKey.pemRepresentation.write(toFile: pair.keyFile, atomically: true, encoding: .utf8)
        return pair
    }

    private static func fileName(_ name: String) -> String {
        String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }
}
