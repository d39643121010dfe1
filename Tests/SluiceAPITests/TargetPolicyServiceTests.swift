import Foundation
import SluiceAPI
import SluiceServer
import SluiceCore
import SluiceTestSupport
import Testing
import NIOHTTP1

/// docs/security.md, "Targets": a service bound beyond loopback refuses jobs that would reach
/// loopback, private or link-local addresses, and sends them no request at all.
@Suite struct TargetPolicyServiceTests {
    static func exposed(_ configuration: inout ServiceConfiguration) {
        configuration.host = "0.0.0.0"
    }

    @Test func anExposedServiceRefusesInternalTargets() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { origin in
            try await withOrigin(root: origin.path, recorder: recorder) { port in
                try await ServiceHarness.with(token: "t", configure: Self.exposed) { (service: ServiceHarness) async throws in
                    for host in [
                        "127.0.0.1", "2130706433", "0x7f.1", "[::1]", "[::ffff:127.0.0.1]", "169.254.169.254", "10.1.2.3", "[fe80::1]",
                    ] {
                        let reply = try await service.request(.POST, "/jobs", json: #"{"url":"http://\#(host):\#(port)/testdata/1M"}"#)
                        #expect(reply.status == 400, "\(host)")
                        #expect(reply.errorCode == "forbidden_target", "\(host)")
                    }
                    // A name is checked when it is resolved: the job fails, having sent nothing.
                    let id = try await service.create(["url": "http://localhost:\(port)/testdata/1M"])["id"] as! String
                    let failed = try await service.waitFor(id) { $0["state"] as? String == "failed" }
                    #expect((failed["error"] as? [String: Any])?["code"] as? String == "forbidden_target")
                    // A redirect hop to an internal address: a public first hop cannot be made
                    // here, so FetcherTests covers hops; the refused name covers resolution.
                    #expect((try await service.request(.GET, "/jobs").json()["jobs"] as? [Any])?.count == 1)
                }
            }
        }
        #expect(recorder.all.isEmpty)
    }

    @Test func allowPrivateNetworksLetsTheSameJobsComplete() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { origin in
            try await withOrigin(root: origin.path, recorder: recorder) { port in
                try await ServiceHarness.with(
                    token: "t",
                    configure: {
                        Self.exposed(&$0)
                        $0.allowPrivateNetworks = true
                    }
                ) { (service: ServiceHarness) async throws in
                    for host in ["127.0.0.1", "2130706433", "localhost"] {
                        let id = try await service.create(["url": "http://\(host):\(port)/testdata/256K"])["id"] as! String
                        let done = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
                        #expect(done["state"] as? String == "completed", "\(host): \(done)")
                        #expect(done["sha256"] as? String == ServiceHarness.expectedSHA256(size: 256 << 10))
                    }
                }
            }
        }
        #expect(!recorder.all.isEmpty)
    }

    @Test func theDefaultFollowsTheBind() {
        var configuration = ServiceConfiguration(host: "127.0.0.1")
        #expect(configuration.targetPolicy.allowsPrivateNetworks)
        configuration.host = "::1"
        #expect(configuration.targetPolicy.allowsPrivateNetworks)
        configuration.host = "localhost"
        #expect(configuration.targetPolicy.allowsPrivateNetworks)
        // A name the resolver could send anywhere is not a loopback bind.
        configuration.host = "box.localhost"
        #expect(!configuration.targetPolicy.allowsPrivateNetworks)
        configuration.host = "0.0.0.0"
        #expect(!configuration.targetPolicy.allowsPrivateNetworks)
        configuration.host = "192.168.1.10"
        #expect(!configuration.targetPolicy.allowsPrivateNetworks)
        configuration.allowPrivateNetworks = true
        #expect(configuration.targetPolicy.allowsPrivateNetworks)
        configuration.host = "127.0.0.1"
        configuration.allowPrivateNetworks = false
        #expect(!configuration.targetPolicy.allowsPrivateNetworks)
    }
}
