public import SluiceCore

/// What one request to `/jsonrpc` (a POST body or a WebSocket message) may make the service
/// compute and hold: at most `maximumCalls` calls, counted before any runs (a batch's
/// entries and every `system.multicall`'s calls), and at most `maximumBytes` of results.
/// A result past the bytes is answered with an error in its place, so the answer stays
/// bounded (a few hundred bytes for each call over) and the calls before it keep theirs.
public struct Aria2AnswerBudget: Sendable {
    public static let maximumCalls = 1_000
    public static let maximumBytes = 16 << 20

    public let maximumBytes: Int
    public private(set) var bytes = 0

    public init(maximumBytes: Int = Self.maximumBytes) {
        self.maximumBytes = maximumBytes
    }

    /// The result, or the error that stands for it when it would take the answer past
    /// `maximumBytes`.
    public mutating func admit(_ result: JSONValue) throws(Aria2Failure) -> JSONValue {
        let size = result.text.utf8.count
        guard size <= maximumBytes - bytes else {
            throw Aria2Failure(
                "the answer to this request passed \(maximumBytes >> 20) MiB; ask for fewer or smaller results in one request")
        }
        bytes += size
        return result
    }

    /// How many calls a request object or batch holds: one for a call, plus the calls a
    /// `system.multicall` lists.
    public static func calls(in value: JSONValue) -> Int {
        switch value {
        case .array(let entries): return entries.reduce(0) { $0 + calls(in: $1) }
        case .object:
            guard value["method"]?.stringValue == "system.multicall", case .array(let params)? = value["params"] else { return 1 }
            return params.reduce(1) { total, param in
                if case .array(let listed) = param { return total + listed.count }
                return total
            }
        default: return 1
        }
    }

    /// The error for a request with more than `maximumCalls` calls: none of them runs.
    public static let tooManyCalls = Aria2Failure(
        code: -32600, "Invalid Request: at most \(maximumCalls) calls in one request, multicall's included")
}
