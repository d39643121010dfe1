import Foundation
import SluiceAPI
import SluiceServer
import SluiceCore
import SluiceTestSupport
import Testing
import NIOHTTP1

/// docs/security.md, "Targets": a service bound beyond loopback refuses jobs that would reach
/// loopback, private or link-local addresses. Which policy a bind gives is this; what the
/// runner does under each policy, on the real engine, is `TargetRefusalTests` (JobServiceTests).
@Suite struct TargetPolicyServiceTests {
    /// An exposed service answers a literal internal address 400 `forbidden_target`, and makes
    /// no job. In process (`RouterHarness`).
    @Test func anExposedServiceRefusesALiteralInternalTarget() async throws {
        try await RouterHarness.with(token: "t", configure: { $0.host = "0.0.0.0" }) { service in
            for host in ["127.0.0.1", "0x7f.1", "[::1]", "169.254.169.254", "10.1.2.3"] {
                let reply = try await service.request(.post, "/jobs", json: #"{"url":"http://\#(host):8080/testdata/1M"}"#)
                #expect(reply.status == 400, "\(host)")
                #expect(reply.errorCode == "forbidden_target", "\(host)")
            }
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
        }
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
