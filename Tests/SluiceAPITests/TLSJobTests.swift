import Foundation
import SluiceAPI
import SluiceServer
import SluiceTestSupport
import Testing

/// Jobs against an HTTPS origin (`sluice serve --tls-cert` with a certificate from the
/// tests' own CA): trusted through `--ca-file`, failing at once with `tls` otherwise, and
/// `"insecure": true` only where the service allows it.
@Suite struct TLSJobTests {
    static let size: Int64 = 2 << 20

    static func withTLSOriginAndService(
        selfSigned: Bool = false,
        configure: @escaping @Sendable (inout ServiceConfiguration, TestCertificateAuthority) -> Void = { _, _ in },
        _ body: @Sendable (TLSOrigin, ServiceHarness) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestCertificateAuthority(directory: directory.path)
            let leaf = try ca.issue("leaf", selfSigned: selfSigned)
            try await TLSOrigin.with(leaf, data: directory.path + "/origin") { origin in
                try await ServiceHarness.with(configure: { configure(&$0, ca) }) { service in
                    try await body(origin, service)
                }
            }
        }
    }

    @Test func aCertificateFromAnUntrustedCAFailsTheJobAtOnceWithTLS() async throws {
        try await Self.withTLSOriginAndService { origin, service in
            let start = ContinuousClock.now
            let id = try await service.create(["url": origin.url("/testdata/2M")])["id"] as! String
            let job = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
            // The first retry round alone would take 1 + 2 + 4 + 8 s.
            #expect(ContinuousClock.now - start < .seconds(10), "no retry round")
            let error = job["error"] as? [String: Any]
            #expect(error?["code"] as? String == "tls")
            let message = error?["message"] as? String ?? ""
            #expect(message.contains("certificate") && message.contains("not trusted") && message.contains("Sluice Test CA"), "\(message)")
            for leak in ["NIOSSL", "BoringSSL", ".cc:", "CERTIFICATE_VERIFY_FAILED"] { #expect(!message.contains(leak), "\(message)") }
        }
    }

    @Test func aCAFileMakesItTrusted() async throws {
        try await Self.withTLSOriginAndService(configure: { configuration, ca in configuration.caFile = ca.certificateFile }) {
            origin, service in
            let id = try await service.create(["url": origin.url("/testdata/2M?seed=4"), "connections": 3])["id"] as! String
            let job = try await service.waitFor(id) { ["completed", "failed"].contains($0["state"] as? String) }
            #expect(job["state"] as? String == "completed", "\(job["error"] ?? "")")
            #expect(job["sha256"] as? String == ServiceHarness.expectedSHA256(size: Self.size, seed: 4))
            #expect(job["insecure"] as? Bool == false)
        }
    }

    @Test func insecureIsRefusedUnlessTheServiceAllowsIt() async throws {
        try await Self.withTLSOriginAndService(selfSigned: true) { origin, service in
            let reply = try await service.request(.POST, "/jobs", json: #"{"url":"\#(origin.url("/testdata/2M"))","insecure":true}"#)
            #expect(reply.status == 400)
            #expect(reply.errorCode == "invalid_field")
            #expect(try reply.json()["error"].flatMap { ($0 as? [String: Any])?["field"] as? String } == "insecure")
            let list = try await service.request(.GET, "/jobs").json()["jobs"] as? [Any]
            #expect(list?.isEmpty == true, "nothing was created")
        }
        try await Self.withTLSOriginAndService(selfSigned: true, configure: { configuration, _ in configuration.allowInsecureTLS = true }) {
            origin, service in
            let created = try await service.create(["url": origin.url("/testdata/2M?seed=6"), "insecure": true])
            #expect(created["insecure"] as? Bool == true)
            let job = try await service.waitFor(created["id"] as! String) { ["completed", "failed"].contains($0["state"] as? String) }
            #expect(job["state"] as? String == "completed", "\(job["error"] ?? "")")
            #expect(job["sha256"] as? String == ServiceHarness.expectedSHA256(size: Self.size, seed: 6))
            // Without it, the same service still verifies.
            let checked = try await service.create(["url": origin.url("/testdata/2M")])
            let failed = try await service.waitFor(checked["id"] as! String) { ["completed", "failed"].contains($0["state"] as? String) }
            #expect((failed["error"] as? [String: Any])?["code"] as? String == "tls")
            #expect(((failed["error"] as? [String: Any])?["message"] as? String)?.contains("self-signed") == true)
        }
    }
}
