/// A JSON-RPC error as aria2 answers it: `code` 1 for a call that failed (a bad option, an
/// unknown GID, a wrong token), the JSON-RPC 2.0 codes for a malformed request.
public struct Aria2Failure: Error, Equatable, Sendable {
    public let code: Int
    public let message: String

    public init(code: Int = 1, _ message: String) {
        self.code = code
        self.message = message
    }

    public static let unauthorized = Aria2Failure("Unauthorized")
    public static let parseError = Aria2Failure(code: -32700, "Parse error.")
    public static let invalidRequest = Aria2Failure(code: -32600, "Invalid Request.")
    public static let methodNotFound = Aria2Failure(code: -32601, "Method not found.")

    public static func notFound(_ gid: String) -> Aria2Failure { Aria2Failure("GID \(gid) is not found") }

    /// The HTTP status of a single call that failed, as aria2 sends it: 404 for an unknown
    /// method, 400 otherwise (aria2 sends 500 for a parse error; nothing a client sends
    /// makes Sluice answer 500).
    public var httpStatus: Int { code == -32601 ? 404 : 400 }
}
