import Foundation
public import SluiceCore

/// A job's headers and dependencies as every store keeps them: JSON text in one column.
/// Text that does not decode reads as none.
extension JobSnapshot {
    public var storedHeaders: String { Self.json(headers) ?? "{}" }
    public var storedDependencies: String { Self.json(after) ?? "[]" }

    /// Nil for a job with no integrity sources or findings: what almost every job stores.
    public var storedIntegrity: String? { integrity.isEmpty ? nil : Self.json(integrity) }

    public static func integrity(stored text: String?) -> JobIntegrity {
        text.flatMap { try? JSONDecoder().decode(JobIntegrity.self, from: Data($0.utf8)) } ?? JobIntegrity()
    }

    public static func headers(stored text: String?) -> [String: String] {
        // What almost every job stores: no decoder for it (a restart reads every job).
        if text == nil || text == "{}" { return [:] }
        return text.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) } ?? [:]
    }

    public static func dependencies(stored text: String?) -> [String] {
        if text == nil || text == "[]" { return [] }
        return text.flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) } ?? []
    }

    private static func json(_ value: some Encodable) -> String? {
        (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }
}
