/// A PATCH field that may be set to a value or to null (removed), as opposed to absent.
public enum Patched<Value: Sendable & Equatable>: Sendable, Equatable {
    case set(Value)
    case removed

    public var value: Value? {
        if case .set(let value) = self { return value }
        return nil
    }
}

/// Reads a JSON object for a PATCH: only the keys it allows (another is `invalid_field`
/// naming it), each of the right type (else `invalid_field` naming it), absent and null told
/// apart where a field may be removed.
struct PatchBody {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    let container: KeyedDecodingContainer<Key>

    init(_ decoder: any Decoder, allowed: Set<String>, unknown: String = "cannot be changed here") throws {
        do {
            container = try decoder.container(keyedBy: Key.self)
        } catch {
            throw SluiceError(.invalidJSON, "the body must be a JSON object")
        }
        if let field = container.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw SluiceError(
                .invalidField, "\(field) \(unknown); the fields are \(allowed.sorted().joined(separator: ", "))", field: field)
        }
    }

    /// The value of `key`, nil when absent; null is the wrong type.
    func value<T: Decodable>(_ type: T.Type, _ key: String) throws -> T? {
        let codingKey = Key(stringValue: key)
        guard container.contains(codingKey) else { return nil }
        do {
            return try container.decode(type, forKey: codingKey)
        } catch {
            throw SluiceError(.invalidField, "\(key) has the wrong type or is out of range", field: key)
        }
    }

    /// The value of `key`: nil when absent, `.removed` when null.
    func nullable<T: Decodable & Sendable & Equatable>(_ type: T.Type, _ key: String) throws -> Patched<T>? {
        let codingKey = Key(stringValue: key)
        guard container.contains(codingKey) else { return nil }
        if (try? container.decodeNil(forKey: codingKey)) == true { return .removed }
        return try value(type, key).map { .set($0) }
    }
}
