import Foundation
public import SluiceCore

/// One JSON-RPC 2.0 call as aria2 takes it: `method`, `params` (an array, maybe absent) and
/// `id` (any value, echoed). aria2's secret comes as the first parameter, `token:SECRET`.
public struct Aria2Call: Sendable {
    public var id: JSONValue
    public var method: String
    public var params: [JSONValue]

    public init(_ value: JSONValue) throws(Aria2Failure) {
        guard case .object = value, case .string(let method)? = value["method"] else { throw .invalidRequest }
        id = value["id"] ?? .null
        self.method = method
        switch value["params"] {
        case nil, .null?: params = []
        case .array(let values)?: params = values
        default: throw .invalidRequest
        }
    }

    public init(id: JSONValue = .null, method: String, params: [JSONValue]) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// Removes and returns the secret of a first parameter `token:SECRET`, if there is one.
    public mutating func takeToken() -> String? {
        guard case .string(let first)? = params.first, first.hasPrefix("token:") else { return nil }
        params.removeFirst()
        return String(first.dropFirst(6))
    }

    /// The parameter at `index`, if given and not null.
    public func param(_ index: Int) -> JSONValue? {
        guard index < params.count, params[index] != .null else { return nil }
        return params[index]
    }

    /// A GID parameter, as the job id it names.
    public func jobID(at index: Int) throws(Aria2Failure) -> (gid: String, id: String) {
        guard case .string(let gid)? = param(index) else { throw Aria2Failure("the GID is missing") }
        guard let id = Aria2GID.jobID(of: gid) else { throw Aria2Failure("invalid GID \(String(gid.prefix(32)))") }
        return (gid, id)
    }

    /// The range every whole-number parameter is held to: aria2's offsets, counts and
    /// positions are list places, and no list holds a billion entries. A number outside it
    /// (`Int64.min` as an offset, `Int64.max` as a position) is refused here, so no
    /// arithmetic on it can overflow and trap.
    public static let integerRange = -1_000_000_000...1_000_000_000

    /// A whole-number parameter (aria2's clients send numbers, some send strings), within
    /// `integerRange`.
    public func integer(at index: Int, _ name: String) throws(Aria2Failure) -> Int? {
        guard let value = try wholeNumber(at: index, name) else { return nil }
        guard value >= Int64(Self.integerRange.lowerBound), value <= Int64(Self.integerRange.upperBound) else {
            throw Aria2Failure("\(name) must be between \(Self.integerRange.lowerBound) and \(Self.integerRange.upperBound)")
        }
        return Int(value)
    }

    /// A count parameter (`num`): a whole number from 0, any larger than `integerRange`
    /// taken as its upper bound (asking for more than there is is asking for all).
    public func count(at index: Int, _ name: String) throws(Aria2Failure) -> Int? {
        guard let value = try wholeNumber(at: index, name) else { return nil }
        guard value >= 0 else { throw Aria2Failure("\(name) must not be negative") }
        return Int(min(value, Int64(Self.integerRange.upperBound)))
    }

    /// The parameter as a 64-bit whole number, from a number or a string; nil when absent.
    private func wholeNumber(at index: Int, _ name: String) throws(Aria2Failure) -> Int64? {
        switch param(index) {
        case nil: return nil
        case .integer(let number)?: return number
        case .string(let text)?:
            guard let number = Int64(text) else { throw Aria2Failure("\(name) must be an integer") }
            return number
        default: throw Aria2Failure("\(name) must be an integer")
        }
    }

    /// aria2's `keys` parameter: the names of the fields to show.
    public func keys(at index: Int) throws(Aria2Failure) -> [String] {
        switch param(index) {
        case nil: return []
        case .array(let values)?: return values.compactMap(\.stringValue)
        case .string(let key)?: return [key]
        default: throw Aria2Failure("keys must be an array of strings")
        }
    }
}

/// What a POST body to `/jsonrpc` holds: one call, a batch (an array of calls), or
/// something that is not a request.
public enum Aria2Body: Sendable {
    case single(JSONValue)
    case batch([JSONValue])

    public static func parse(_ bytes: some Collection<UInt8>) throws(Aria2Failure) -> Aria2Body {
        if JSONDuplicateKeys.first(in: bytes) != nil { throw Aria2Failure(code: -32700, "Parse error: a key appears twice in one object.") }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw .parseError
        }
        switch value {
        case .object: return .single(value)
        case .array(let calls): return .batch(calls)
        default: throw .invalidRequest
        }
    }
}

/// aria2's answers: `{"id","jsonrpc":"2.0","result"}` or `{"id","jsonrpc":"2.0","error":{"code","message"}}`.
public enum Aria2Response {
    public static func result(_ value: JSONValue, id: JSONValue) -> JSONValue {
        .object([("id", id), ("jsonrpc", .string("2.0")), ("result", value)])
    }

    public static func error(_ failure: Aria2Failure, id: JSONValue) -> JSONValue {
        .object([("id", id), ("jsonrpc", .string("2.0")), ("error", failure.json)])
    }
}

extension Aria2Failure {
    public var json: JSONValue { .object([("code", .integer(Int64(code))), ("message", .string(message))]) }
}
