import Foundation
import NIOHTTP1
import SluiceAPI
import SluiceServer
import SluiceCore
import SluiceTestSupport
import Testing

/// Issue 13: downloads through HTTP CONNECT and SOCKS5 proxies written in the test support,
/// from an origin that records where each connection came from (the proxies connect from
/// 127.0.0.2, the service directly from 127.0.0.1).
@Suite(.serialized) struct ProxyTests {
    static let size: Int64 = 3 << 20

    /// Runs a recording origin and the service, configured by `configure` with the origin's port.
    static func withOriginAndService(
        configure: @escaping @Sendable (inout ServiceConfiguration) -> Void = { _ in },
        _ body: @Sendable (_ origin: String, _ recorder: RequestRecorder, _ service: ServiceHarness) async throws -> Void
    ) async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { root in
            try await withOrigin(root: root.path, recorder: recorder) { port in
                try await ServiceHarness.with(configure: configure) { service in
                    try await body("http://127.0.0.1:\(port)", recorder, service)
                }
            }
        }
    }

    static func completes(_ service: ServiceHarness, _ fields: [String: Any]) async throws -> [String: Any] {
        let id = try await service.create(fields)["id"] as! String
        let job = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
        #expect(job["state"] as? String == "completed", "\(job["error"] ?? "")")
        #expect(job["sha256"] as? String == ServiceHarness.expectedSHA256(size: size, seed: 3))
        return job
    }

    @Test func aJobsOwnHTTPProxyCarriesEveryConnectionAndHidesItsCredentials() async throws {
        let proxy = try await TestHTTPProxy(credentials: ("sluice", "pa:ss"))
        defer { Task { try? await proxy.shutdown() } }
        try await Self.withOriginAndService { origin, recorder, service in
            let url = "http://sluice:pa%3Ass@127.0.0.1:\(proxy.port)"
            let job = try await Self.completes(service, ["url": origin + "/testdata/3M?seed=3", "proxy": url, "connections": 4])
            #expect(job["proxy"] as? String == "http://***@127.0.0.1:\(proxy.port)")
            let shown = String(decoding: try await service.request(.GET, "/jobs/\(job["id"] as! String)").body, as: UTF8.self)
            #expect(!shown.contains("pa%3Ass") && !shown.contains("pa:ss") && !shown.contains("sluice:"))
            // Every request reached the origin through the proxy, with the credentials, in
            // absolute form as curl sends plain http (standard proxies allow CONNECT to 443 only).
            #expect(!proxy.entries.isEmpty)
            #expect(
                proxy.entries.allSatisfy { $0.method == "GET" && $0.target.hasPrefix(origin + "/testdata/3M?seed=3") }, "\(proxy.entries)")
            #expect(proxy.entries.allSatisfy { $0.proxyAuthorization == "Basic " + Data("sluice:pa:ss".utf8).base64EncodedString() })
            #expect(!recorder.peers.isEmpty)
            #expect(recorder.peers.allSatisfy { $0 == "127.0.0.2" }, "\(recorder.peers)")
            #expect(proxy.tunnelledBytes >= Self.size)
        }
    }

    /// Issue 21: an edit's probe of a new URL went direct, not through the job's own proxy
    /// (the new origin saw the service's own address, the proxy nothing). It leaves by the
    /// job's route, as its runs do.
    @Test func anEditsProbeGoesThroughTheJobsProxy() async throws {
        let proxy = try await TestHTTPProxy()
        defer { Task { try? await proxy.shutdown() } }
        try await Self.withOriginAndService { origin, recorder, service in
            let fields: [String: Any] = [
                "url": origin + "/testdata/32M?seed=5&rate=4M", "proxy": "http://127.0.0.1:\(proxy.port)", "connections": 1,
            ]
            let id = try await service.create(fields)["id"] as! String
            try await service.waitFor(id) { ($0["bytesDone"] as? Int ?? 0) >= 1 << 20 }
            #expect(try await service.request(.POST, "/jobs/\(id)/pause").status == 200)
            let (entriesBefore, peersBefore) = (proxy.entries.count, recorder.peers.count)
            let newURL = origin + "/testdata/32M?seed=5&cut=0"
            let edited = try await service.send(.patch, "/jobs/\(id)", ["url": newURL])
            #expect(edited.status == 200, "\(String(decoding: edited.body, as: UTF8.self))")
            // The job stays paused: the only request since is the probe, through the proxy.
            #expect(proxy.entries.dropFirst(entriesBefore).contains { $0.target.hasPrefix(newURL) }, "\(proxy.entries)")
            let peers = recorder.peers.dropFirst(peersBefore)
            #expect(!peers.isEmpty && peers.allSatisfy { $0 == "127.0.0.2" }, "\(peers)")
        }
    }

    @Test func aSOCKS5ProxyCarriesTheDownload() async throws {
        let proxy = try await TestSOCKS5Proxy()
        defer { Task { try? await proxy.shutdown() } }
        try await Self.withOriginAndService { origin, recorder, service in
            _ = try await Self.completes(service, ["url": origin + "/testdata/3M?seed=3", "proxy": "socks5://127.0.0.1:\(proxy.port)"])
            let port = origin.split(separator: ":").last!
            #expect(!proxy.targets.isEmpty)
            #expect(proxy.targets.allSatisfy { $0 == "127.0.0.1:\(port)" })
            #expect(!recorder.peers.isEmpty)
            #expect(recorder.peers.allSatisfy { $0 == "127.0.0.2" }, "\(recorder.peers)")
        }
    }

    @Test func theServiceProxyAppliesToEveryJobExceptWhatNoProxyNames() async throws {
        let proxy = try await TestHTTPProxy()
        defer { Task { try? await proxy.shutdown() } }
        let proxyURL = try EndpointURL.proxy("http://127.0.0.1:\(proxy.port)", field: "proxy")
        try await Self.withOriginAndService(configure: { $0.proxies = ProxySettings(proxy: proxyURL) }) { origin, recorder, service in
            _ = try await Self.completes(service, ["url": origin + "/testdata/3M?seed=3"])
            #expect(!proxy.entries.isEmpty)
            #expect(!recorder.peers.isEmpty)
            #expect(recorder.peers.allSatisfy { $0 == "127.0.0.2" })
        }
        try await Self.withOriginAndService(configure: {
            $0.proxies = ProxySettings(proxy: proxyURL, noProxy: ["example.com", "127.0.0.0/8"])
        }) { origin, recorder, service in
            let before = proxy.entries.count
            _ = try await Self.completes(service, ["url": origin + "/testdata/3M?seed=3"])
            #expect(proxy.entries.count == before, "no_proxy sends 127.0.0.1 direct")
            #expect(!recorder.peers.isEmpty)
            #expect(recorder.peers.allSatisfy { $0 == "127.0.0.1" })
        }
    }

    @Test(arguments: [TestHTTPProxy.Mode.refuse, .dropAfterConnect])
    func aProxyThatRefusesOrDropsFailsTheJobWithNetworkNamingItRedacted(mode: TestHTTPProxy.Mode) async throws {
        let proxy = try await TestHTTPProxy(mode: mode)
        defer { Task { try? await proxy.shutdown() } }
        try await Self.withOriginAndService { origin, recorder, service in
            let id =
                try await service.create([
                    "url": origin + "/testdata/1M", "proxy": "http://user:secret@127.0.0.1:\(proxy.port)",
                ])["id"] as! String
            let job = try await service.waitFor(id) { $0["state"] as? String == "failed" }
            let error = job["error"] as! [String: Any]
            #expect(error["code"] as? String == "network")
            let message = error["message"] as! String
            #expect(message.contains("http://***@127.0.0.1:\(proxy.port)"), "\(message)")
            #expect(!message.contains("secret"))
            // A refusal is final at once, with the proxy's status; a drop is tried again.
            // Nothing reached the origin.
            if mode == .refuse {
                #expect(proxy.entries.count == 1)
                #expect(message.contains("403 Forbidden"), "\(message)")
            } else {
                #expect(proxy.entries.count > 1)
            }
            #expect(recorder.all.isEmpty)
        }
    }

    @Test func badProxyURLsAreRefusedNamingTheField() async throws {
        try await ServiceHarness.with { service in
            let url = "http://example.invalid/file"
            let long = "http://" + String(repeating: "a", count: 2100) + ":8080"
            for proxy in ["https://proxy:443", "ftp://proxy", "socks5://user:pw@proxy:1080", "http://", long, "proxy:8080"] {
                let reply = try await service.send(.post, "/jobs", ["url": url, "proxy": proxy, "paused": true])
                #expect(reply.status == 400, "\(proxy.prefix(40)): \(reply.status)")
                #expect(reply.errorField == "proxy", "\(proxy.prefix(40))")
            }
            #expect(try await service.states().isEmpty)
        }
    }
}
