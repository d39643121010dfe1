import Foundation
import SluiceAPI
import SluiceCore
import SluiceTestSupport
import Testing

/// docs/security.md, "Browsers": DNS rebinding (421) and CSRF (403), in process, the `Host`
/// (or `:authority`) given as a request would carry it. What a downloaded page may do is
/// `FileFastPathTests`': its headers come from whichever path serves the file.
@Suite struct BrowserGuardTests {
    /// The port the requests say they were sent to: no socket listens.
    static let port = 8080
    static let host = "127.0.0.1:\(port)"

    /// `--allowed-origins`' values and `Origin` headers: scheme, host and port, nothing more.
    @Test func originsAreSchemeHostAndPortOnly() {
        #expect(WebOrigin("HTTP://AriaNg.example:80") == WebOrigin("http://ariang.example"))
        #expect(WebOrigin("https://[::1]:8443")?.description == "https://[::1]:8443")
        for bad in [
            "ariang.example", "ftp://a.example", "http://a.example/", "http://a.example/x", "http://u@a.example",
            "http://a.example:99999", "http://", "http://a.example?x", "null",
        ] {
            #expect(WebOrigin(bad) == nil, "\(bad)")
        }
    }

    @Test func withoutATokenOnlyLoopbackHostsAreAnswered() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            let port = Self.port
            for host in ["attacker.example", "attacker.example:\(port)", "127.0.0.1.nip.io:\(port)", "10.0.0.1:\(port)", "[::2]:\(port)"] {
                let reply = try await service.raw("GET", "/jobs", host: host)
                #expect(reply.status == 421, "\(host)")
                #expect(String(decoding: reply.body, as: UTF8.self).contains(#""code":"misdirected_request""#))
                let create = try await service.raw("POST", "/jobs", host: host, body: #"{"url":"http://127.0.0.1:1/a"}"#)
                #expect(create.status == 421, "\(host)")
            }
            // A Host that cannot be read is not an allowed one: the check fails closed.
            for host in ["evil:abc", "a@b", "[::1", ""] {
                #expect(try await service.raw("GET", "/jobs", host: host).status == 421, "\(host)")
            }
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST", "[::1]:\(port)", "127.8.9.10", "app.localhost:\(port)"] {
                #expect(try await service.raw("GET", "/jobs", host: host).status == 200, "\(host)")
            }
            // Nothing was created by the refused POSTs.
            #expect((try await service.request(.get, "/jobs").json()["jobs"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func anAllowedHostsListAppliesWhateverTheBind() async throws {
        try await RouterHarness.with(token: "t", configure: { $0.allowedHosts = ["sluice.lan"] }) {
            (service: RouterHarness) async throws in
            #expect(try await service.raw("GET", "/jobs", host: "sluice.lan:8080", authorized: true).status == 200)
            #expect(try await service.raw("GET", "/jobs", host: "SLUICE.LAN", authorized: true).status == 200)
            #expect(try await service.raw("GET", "/jobs", host: "localhost", authorized: true).status == 200)
            #expect(try await service.raw("GET", "/jobs", host: "other.lan", authorized: true).status == 421)
            #expect(try await service.raw("GET", "/healthz", host: "other.lan").status == 421)
        }
        // With a token and no list, any Host is answered: the token is the guard.
        try await RouterHarness.with(token: "t") { (service: RouterHarness) async throws in
            #expect(try await service.raw("GET", "/jobs", host: "other.lan", authorized: true).status == 200)
            #expect(try await service.raw("GET", "/jobs", host: "other.lan").status == 401)
        }
    }

    @Test func crossSiteStateChangesAreRefused() async throws {
        try await RouterHarness.with { (service: RouterHarness) async throws in
            // Slow enough to be running still when the pause below comes (in process, 1 MiB took
            // no time and the pause met a completed job: 409).
            let id = try await service.create(["url": service.testdata("/testdata/64M?rate=1M"), "paused": true])["id"] as! String
            let port = Self.port
            let own = "http://127.0.0.1:\(port)"
            for (method, path) in [("POST", "/jobs/\(id)/resume"), ("DELETE", "/jobs/\(id)"), ("POST", "/jobs")] {
                for origin in ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:\(port)x"] {
                    let body = method == "POST" ? #"{"url":"http://127.0.0.1:1/a"}"# : nil
                    let reply = try await service.raw(method, path, host: Self.host, headers: ["Origin": origin], body: body)
                    #expect(reply.status == 403, "\(method) \(path) from \(origin)")
                    #expect(String(decoding: reply.body, as: UTF8.self).contains(#""code":"cross_origin""#))
                }
            }
            // Nothing changed.
            let jobs = try await service.request(.get, "/jobs").json()["jobs"] as? [[String: Any]]
            #expect(jobs?.count == 1)
            #expect(jobs?.first?["state"] as? String == "paused")
            // Reads from anywhere, and changes from the dashboard's own origin or from curl, go through.
            #expect(try await service.raw("GET", "/jobs/\(id)", headers: ["Origin": "http://evil.example"], host: Self.host).status == 200)
            #expect(try await service.raw("POST", "/jobs/\(id)/resume", headers: ["Origin": own], host: Self.host).status == 200)
            #expect(
                try await service.raw(
                    "POST", "/jobs/\(id)/pause", headers: ["Origin": "http://LOCALHOST:\(port)"], host: "localhost:\(port)"
                ).status == 200)
            #expect(try await service.raw("DELETE", "/jobs/\(id)", host: Self.host).status == 204)
        }
    }
}
