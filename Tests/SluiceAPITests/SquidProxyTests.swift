import Foundation
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing

/// Jobs through Debian's Squid with its default rules (CONNECT only to 443), the proxy users
/// have: plain http goes in absolute form, as curl sends it; https to another port is a
/// CONNECT Squid refuses, and the job fails at once naming the 403.
@Suite(.serialized, .enabled(if: TestSquid.unavailable == nil, "Squid: \(TestSquid.unavailable ?? "")"))
struct SquidProxyTests {
    static let size: Int64 = 3 << 20

    @Test func anHTTPJobGoesThroughSquidInAbsoluteForm() async throws {
        let squid = try TestSquid.proxy().get()
        let proxy = try EndpointURL.proxy(squid.url, field: "proxy")
        try await withTemporaryDirectory { root in
            try await withOrigin(root: root.path) { port in
                try await ServiceHarness.with(configure: { $0.proxies = ProxySettings(proxy: proxy) }) { service in
                    let url = "http://127.0.0.1:\(port)/testdata/3M?seed=9"
                    let id = try await service.create(["url": url, "connections": 3])["id"] as! String
                    let job = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
                    #expect(job["state"] as? String == "completed", "\(job["error"] ?? "")")
                    #expect(job["sha256"] as? String == ServiceHarness.expectedSHA256(size: Self.size, seed: 9))
                    // Squid logs URLs without their query (strip_query_terms); the origin's port is this test's own.
                    #expect(
                        try await squid.waitForLogLine(containing: " GET http://127.0.0.1:\(port)/testdata/3M"),
                        "\(squid.logged.suffix(2000))")
                    #expect(!squid.logged.contains("CONNECT 127.0.0.1:\(port)"))
                }
            }
        }
    }

    @Test func anHTTPSJobToAPortSquidRefusesFailsAtOnceNamingThe403() async throws {
        let squid = try TestSquid.proxy().get()
        try await withTemporaryDirectory { directory in
            let ca = try TestCertificateAuthority(directory: directory.path)
            try await TLSOrigin.with(try ca.issue("leaf"), data: directory.path + "/origin") { origin in
                try await ServiceHarness.with(configure: { $0.caFile = ca.certificateFile }) { service in
                    let start = ContinuousClock.now
                    let id = try await service.create(["url": origin.url("/testdata/1M"), "proxy": squid.url])["id"] as! String
                    let job = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
                    #expect(ContinuousClock.now - start < .seconds(10), "no retry round")
                    let error = job["error"] as? [String: Any]
                    #expect(error?["code"] as? String == "network")
                    let message = error?["message"] as? String ?? ""
                    #expect(
                        message.contains("refused") && message.contains("403 Forbidden") && message.contains(squid.address), "\(message)")
                    #expect(try await squid.waitForLogLine(containing: "TCP_DENIED/403"))
                    #expect(
                        squid.logged.split(separator: "\n").contains {
                            $0.contains("TCP_DENIED/403") && $0.contains("CONNECT localhost:\(origin.port)")
                        })
                }
            }
        }
    }
}
