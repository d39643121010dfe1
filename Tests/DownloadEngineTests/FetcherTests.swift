import AsyncHTTPClient
import DownloadEngine
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SluiceCore
import SluiceTestSupport
import Synchronization
import Testing
import NIOHTTP1

/// docs/security.md, "Targets" and "Credentials", on every request a download makes: the
/// address connected to (each redirect hop included) is checked, and credentials stay with the
/// job URL's origin.
@Suite struct FetcherTests {
    /// Headers each path received, as `path: [header: value]`.
    final class HeaderLog: Sendable {
        private let entries = Mutex<[(path: String, headers: HTTPFields, authority: String?)]>([])
        func record(_ request: Request) {
            entries.withLock { $0.append((request.uri.path, request.headers, request.head.authority)) }
        }
        var all: [(path: String, headers: HTTPFields, authority: String?)] { entries.withLock { $0 } }
        func headers(_ path: String) -> [HTTPFields] { all.filter { $0.path == path }.map(\.headers) }
    }

    /// A server on `host` that answers `/to?url=U` with a 302 to U and anything else with "ok",
    /// logging every request's headers.
    static func withRedirector<T: Sendable>(
        host: String, log: HeaderLog, _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        let router = Router()
        router.get("/to") { request, _ -> Response in
            log.record(request)
            let target = request.uri.queryParameters.get("url") ?? "/"
            return Response(status: .found, headers: [.location: target, .contentLength: "0"])
        }
        router.get("/**") { request, _ -> String in
            log.record(request)
            return "ok"
        }
        return try await withRunningServer(router: router, host: host, body)
    }

    static func get(_ fetcher: Fetcher, _ url: String, headers: [String: String] = [:]) async throws -> Fetcher.Fetched {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        return try await fetcher.execute(
            request, credentialsOrigin: url, deadline: NIODeadline.now() + .seconds(60), logger: Logger(label: "test"))
    }

    static let loopbackOnlyFirstHop = TargetPolicy(allowsPrivateNetworks: false, exceptions: [IPAddress(host: "127.0.0.1")!])

    /// A test that threw before `shutdown()` dropped its fetcher, whose HTTPClient trapped in
    /// its deinit and took every test in the process with it (CI's SIGILL). Before the
    /// fetcher shut its clients down itself, this test crashed the test process.
    @Test func aFetcherDroppedWithoutShutdownDoesNotTrap() async throws {
        var fetcher: Fetcher? = Fetcher(stallTimeout: 5)
        #expect(fetcher != nil)
        fetcher = nil
        // Its clients shut down behind it; a new one still works.
        let next = Fetcher(stallTimeout: 5)
        try await next.shutdown()
    }

    @Test func aRedirectToARefusedAddressIsNeverFollowed() async throws {
        let first = HeaderLog()
        let second = HeaderLog()
        try await Self.withRedirector(host: "127.0.0.1", log: first) { firstPort in
            try await Self.withRedirector(host: "127.0.0.2", log: second) { secondPort in
                let target = "http://127.0.0.2:\(secondPort)/secret"
                let start = "http://127.0.0.1:\(firstPort)/to?url=\(target)"
                let guarded = Fetcher(policy: Self.loopbackOnlyFirstHop, stallTimeout: 5)
                await #expect(throws: SluiceError(.forbiddenTarget, TargetPolicy.refusal(host: "127.0.0.2").message)) {
                    _ = try await Self.get(guarded, start)
                }
                try await guarded.shutdown()
                #expect(first.all.count == 1)
                #expect(second.all.isEmpty)

                // Allowed, the same chain reaches the second server, and says where it ended.
                let open = Fetcher(policy: .allowAll, stallTimeout: 5)
                let fetched = try await Self.get(open, start)
                #expect(fetched.response.status == .ok)
                #expect(fetched.url == target)
                try await open.shutdown()
                #expect(second.all.count == 1)
            }
        }
    }

    @Test func literalAddressesAreCheckedInEveryFormTheResolverAccepts() async throws {
        let fetcher = Fetcher(policy: .publicOnly, stallTimeout: 5)
        for host in [
            "127.0.0.1", "2130706433", "0x7f.1", "127.1", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0", "localhost", "169.254.169.254",
        ] {
            await #expect(throws: SluiceError.self, "\(host)") {
                _ = try await Self.get(fetcher, "http://\(host):1/")
            }
            do {
                _ = try await Self.get(fetcher, "http://\(host):1/")
            } catch let error as SluiceError {
                #expect(error.code == .forbiddenTarget, "\(host): \(error)")
            }
        }
        try await fetcher.shutdown()
    }

    /// Issue 21: through a proxy the proxy resolves names, so `localhost` reached the proxy
    /// host's own loopback services where loopback is refused. A loopback name (RFC 6761) is
    /// refused before any proxy is asked; the proxy hears nothing.
    @Test func loopbackNamesAreNeverHandedToAProxy() async throws {
        let proxy = try await TestHTTPProxy()
        let settings = ProxySettings(proxy: try EndpointURL.proxy("http://127.0.0.1:\(proxy.port)", field: "proxy"))
        let fetcher = Fetcher(policy: .publicOnly, stallTimeout: 5, proxies: settings)
        for host in ["localhost", "LocalHost.", "api.localhost"] {
            do {
                _ = try await Self.get(fetcher, "http://\(host):9/x")
                Issue.record("\(host) was fetched")
            } catch let error as SluiceError {
                #expect(error.code == .forbiddenTarget, "\(host): \(error)")
            }
        }
        #expect(proxy.entries.isEmpty)
        try await fetcher.shutdown()
        try await proxy.shutdown()
    }

    /// Issue 35, finding 4: `x%40127.0.0.1` was judged as one name and handed to the proxy
    /// decoded, as user `x` at `127.0.0.1`; Squid then fetched a loopback-only file. A host
    /// with `%` (a job stored before the API refused them, or a redirect) is never sent.
    @Test func aPercentEncodedHostIsNeverHandedToAProxy() async throws {
        let proxy = try await TestHTTPProxy()
        let settings = ProxySettings(proxy: try EndpointURL.proxy("http://127.0.0.1:\(proxy.port)", field: "proxy"))
        let fetcher = Fetcher(policy: .publicOnly, stallTimeout: 5, proxies: settings)
        for host in ["x%40127.0.0.1:9", "x%40localhost", "a%2fb", "a%3fb", "a%23b", "%6c%6f%63%61%6c%68%6f%73%74"] {
            do {
                _ = try await Self.get(fetcher, "http://\(host)/x")
                Issue.record("\(host) was fetched")
            } catch {
                #expect((error as? SluiceError)?.code == .invalidURL, "\(host): \(error)")
            }
        }
        #expect(proxy.entries.isEmpty)
        try await fetcher.shutdown()
        try await proxy.shutdown()
    }

    @Test func aRedirectToAPercentEncodedHostIsNotFollowed() async throws {
        let log = HeaderLog()
        try await Self.withRedirector(host: "127.0.0.1", log: log) { port in
            let fetcher = Fetcher(stallTimeout: 5)
            let start = "http://127.0.0.1:\(port)/to?url=http://x%2540127.0.0.1:\(port)/secret"
            do {
                _ = try await Self.get(fetcher, start)
                Issue.record("the redirect was followed")
            } catch {
                #expect((error as? SluiceError)?.code == .invalidResponse, "\(error)")
            }
            try await fetcher.shutdown()
            #expect(log.all.map(\.path) == ["/to"])
        }
    }

    @Test func tooManyRedirectsStopAtTen() async throws {
        let log = HeaderLog()
        try await Self.withRedirector(host: "127.0.0.1", log: log) { port in
            // Eleven nested redirects: /to?url=/to?url=... (each level encoded once more).
            var url = "http://127.0.0.1:\(port)/end"
            for _ in 0..<11 {
                url = "http://127.0.0.1:\(port)/to?url=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            }
            let fetcher = Fetcher(stallTimeout: 5)
            await #expect(throws: SluiceError(.tooManyRedirects, "more than 10 redirects")) { _ = try await Self.get(fetcher, url) }
            try await fetcher.shutdown()
        }
    }

    /// The name is sent as the pin was made: lower-cased. AsyncHTTPClient looks its
    /// `dnsOverride` up with the host exactly as spelled, so `LocalHost` would otherwise miss
    /// the pin and be resolved again, to whatever DNS says by then.
    @Test func mixedCaseNamesUseThePinnedAddress() async throws {
        let log = HeaderLog()
        try await Self.withRedirector(host: "127.0.0.1", log: log) { port in
            let fetcher = Fetcher(policy: Self.loopbackOnlyFirstHop, stallTimeout: 5)
            let fetched = try await Self.get(fetcher, "http://LocalHost:\(port)/file")
            #expect(fetched.response.status == .ok)
            #expect(fetched.url == "http://localhost:\(port)/file")
            try await fetcher.shutdown()
            #expect(log.all.first?.authority == "localhost:\(port)")
        }
    }

    @Test func credentialsGoOnlyToTheJobURLsOrigin() async throws {
        let home = HeaderLog()
        let away = HeaderLog()
        try await Self.withRedirector(host: "127.0.0.1", log: home) { homePort in
            try await Self.withRedirector(host: "127.0.0.1", log: away) { awayPort in
                let fetcher = Fetcher(stallTimeout: 5)
                let back = "http://127.0.0.1:\(homePort)/back"
                let start = "http://127.0.0.1:\(homePort)/to?url=http://127.0.0.1:\(awayPort)/to?url=\(back)"
                let credentials = [
                    "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic x", "X-Other": "kept",
                ]
                let fetched = try await Self.get(fetcher, start, headers: credentials)
                #expect(fetched.url == back)
                try await fetcher.shutdown()
                for fields in away.all.map(\.headers) {
                    #expect(fields[.authorization] == nil)
                    #expect(fields[.cookie] == nil)
                    #expect(fields[HTTPField.Name("Proxy-Authorization")!] == nil)
                    #expect(fields[HTTPField.Name("X-Other")!] == "kept")
                }
                #expect(away.all.count == 1)
                // Back at the job's own origin, its credentials are sent again.
                for fields in home.all.map(\.headers) {
                    #expect(fields[.authorization] == "Bearer secret")
                    #expect(fields[.cookie] == "session=1")
                }
                #expect(home.all.count == 2)
            }
        }
    }
}
