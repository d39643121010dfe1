import Crypto
import Foundation
public import SluiceCore

extension CreateJobRequest {
    /// What `Idempotency-Key` compares between two creates: the SHA-256, in hex, of the
    /// request's fields as decoded, each named and length-prefixed. Key order, spacing and a
    /// default left out or spelled out do not change it; any value that changes the job does.
    public var fingerprint: String {
        func text(_ value: String?) -> String { value.map { "\($0.utf8.count):\($0)" } ?? "-" }
        var fields: [(String, String)] = [
            ("url", text(url)), ("filename", text(filename)), ("connections", String(connections)),
            ("sha256", text(checksum?.algorithm == .sha256 ? checksum?.hex : nil)),
            ("headers", headers.sorted { $0.key < $1.key }.map { text($0.key) + text($0.value) }.joined()),
            ("priority", String(priority)), ("paused", String(paused)), ("after", after.map(text).joined()),
            ("limitRate", text(limitRate.map(String.init))), ("notify", text(notify)), ("proxy", text(proxy)),
            ("insecure", String(insecure)),
        ]
        // Only when set: a key stored before `dir` existed keeps its fingerprint.
        if let directory { fields.append(("dir", text(directory))) }
        // A checksum of another algorithm than `sha256` (which is in the fields already).
        if let checksum, checksum.algorithm != .sha256 { fields.append(("checksum", text(checksum.description))) }
        if let checksumURL { fields.append(("checksumUrl", text(checksumURL))) }
        if let checksumName { fields.append(("checksumName", text(checksumName))) }
        if let signatureURL { fields.append(("signatureUrl", text(signatureURL))) }
        if !mirrors.isEmpty { fields.append(("mirrors", mirrors.map(text).joined())) }
        // Left out before: a retried create with another start was taken for the same.
        if let startAt { fields.append(("startAt", String(startAt.timeIntervalSince1970))) }
        if ignoreSchedule { fields.append(("ignoreSchedule", "true")) }
        let digest = SHA256.hash(data: Array(fields.map { "\($0.0)=\($0.1)\n" }.joined().utf8))
        let hex = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
