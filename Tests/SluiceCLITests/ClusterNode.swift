#if canImport(Glibc)
import Glibc
#endif
import Crypto
import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// A `sluice serve` process that is one node of a cluster on a test database.
final class ClusterNode: Sendable {
    let name: String
    let process: ChildProcess
    let port: Int

    init(name: String, store: String, data: String, lease: String = "3s", maxActive: Int = 3) async throws {
        self.name = name
        process = try ChildProcess(
            arguments: [
                "serve", "--port", "0", "--data", data, "--store", store, "--node-name", name, "--lease", lease,
                "--max-active", String(maxActive),
            ],
            environment: ["SLUICE_LOG_LEVEL": "info"]
        )
        let line = try await process.waitForLine(containing: "listening on http://127.0.0.1:")
        port = Int(line.split(separator: ":").last!)!
    }

    func json(_ method: String = "GET", _ path: String, body: String? = nil) async throws -> (status: Int, json: Any) {
        let response = try await RawHTTPClient.request(
            port: port, method: method, path: path, headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body
        )
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body))) ?? [:])
    }

    func create(_ url: String, connections: Int = 2) async throws -> String {
        let (status, json) = try await self.json("POST", "/jobs", body: #"{"url":"\#(url)","connections":\#(connections)}"#)
        #expect(status == 201)
        return (json as! [String: Any])["id"] as! String
    }

    /// Several jobs in one request (`POST /jobs/batch`): made, and claimed, together.
    func create(_ urls: [String], connections: Int = 2) async throws -> [String] {
        let jobs = urls.map { #"{"url":"\#($0)","connections":\#(connections)}"# }.joined(separator: ",")
        let (status, json) = try await self.json("POST", "/jobs/batch", body: #"{"jobs":[\#(jobs)]}"#)
        #expect(status == 201)
        return ((json as? [String: Any])?["jobs"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    func job(_ id: String) async throws -> [String: Any] {
        try await json("GET", "/jobs/\(id)").json as? [String: Any] ?? [:]
    }

    func jobs() async throws -> [[String: Any]] {
        (try await json("GET", "/jobs?limit=1000").json as? [String: Any])?["jobs"] as? [[String: Any]] ?? []
    }

    /// A counter or gauge of `/metrics` for this node, 0 when absent.
    func metric(_ name: String) async throws -> Double {
        let text = String(decoding: try await RawHTTPClient.request(port: port, path: "/metrics").body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { return value }
        }
        return 0
    }

    func stop() async {
        process.signal(SIGKILL)
        _ = try? await process.finish(timeout: .seconds(10))
    }
}

enum Cluster {
    static func expected(size: Int64, seed: UInt64) -> String {
        SHA256.hash(data: TestDataContent(seed: seed).bytes(0..<size)).map { String(format: "%02x", $0) }.joined()
    }

    /// Polls `condition` every 50 ms until it holds or `timeout` passes; returns whether it held.
    @discardableResult
    static func waitUntil(_ timeout: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await SluiceTestSupport.waitUntil(timeout, condition)
    }

    /// Why the cluster's tests cannot run here, said once on standard error.
    static var skipReason: String? {
        let reason = TestPostgres.unavailable
        if let reason { FileHandle.standardError.write(Data("ClusterTests skipped: \(reason)\n".utf8)) }
        return reason
    }
}
