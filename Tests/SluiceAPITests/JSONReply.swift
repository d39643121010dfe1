import Foundation
import SluiceTestSupport

/// An API answer, through a socket (`ServiceHarness`) or in-process (`RouterHarness`),
/// read as the API's JSON (docs/api.md).
protocol JSONReply: Sendable {
    var bodyData: Data { get }
}

extension JSONReply {
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: bodyData) as? [String: Any] else {
            throw RawHTTPClient.Failure(description: "not a JSON object: \(String(decoding: bodyData, as: UTF8.self))")
        }
        return object
    }

    /// `error.code` of an error body (docs/api.md, "Errors").
    var errorCode: String? { ((try? json())?["error"] as? [String: Any])?["code"] as? String }
}
