import DownloadEngine
import SluiceCore

extension Fetcher {
    /// A job's webhook and proxy must not name a literal address the policy refuses (names
    /// are checked when they are resolved, on every connection).
    func checkEndpoints(notify: String?, proxy: String?) throws {
        if let notify, let refusal = literalRefusal(for: notify) {
            throw SluiceError(.forbiddenTarget, "notify: \(refusal.message)", field: "notify")
        }
        if let proxy, let endpoint = try? EndpointURL.proxy(proxy, field: "proxy"),
            let refusal = literalRefusal(proxy: endpoint)
        {
            throw SluiceError(.forbiddenTarget, "proxy: \(refusal.message)", field: "proxy")
        }
    }
}
