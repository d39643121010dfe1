import Foundation
import SluiceCore
import Testing

/// Issue 13's pure rules: endpoint URLs, curl's proxy variables, the webhook schedule.
struct EndpointURLTests {
    @Test func proxiesAndWebhooksAreParsedWithTheirDefaults() throws {
        let proxy = try EndpointURL.proxy("http://user:p%40ss@Proxy.example:3128", field: "proxy")
        #expect(proxy.scheme == "http" && proxy.host == "Proxy.example" && proxy.port == 3128)
        #expect(proxy.user == "user" && proxy.password == "p@ss")
        #expect(proxy.redacted == "http://***@Proxy.example:3128")
        #expect(try EndpointURL.proxy("socks5://[::1]", field: "proxy").authority == "[::1]:1080")
        #expect(try EndpointURL.proxy("http://proxy:3128/", field: "proxy").port == 3128)
        #expect(try EndpointURL("https://hooks.example/x", schemes: EndpointURL.webhookSchemes, field: "notify").port == 443)
    }

    @Test(arguments: [
        "ftp://proxy:21", "https://proxy:443", "proxy:8080", "http://", "http:///path", "http://pro xy:1",
        "socks5://u:p@proxy:1080", "http://proxy:99999",
        // Found by schemathesis: a path was accepted (and ignored) where the spec allows none.
        "socks5://proxy/*", "http://proxy:3128/path", "http://proxy:3128?x=1", "http://proxy:3128#top",
    ])
    func badProxiesNameTheirField(text: String) {
        let error = #expect(throws: SluiceError.self) { try EndpointURL.proxy(text, field: "proxy") }
        #expect(error?.field == "proxy")
    }

    /// Found by schemathesis (a random seed): a `*` in a webhook's host was accepted, against
    /// the spec's pattern, and failed only at the first delivery.
    @Test(arguments: [
        "http://R9V8k.snfY48LmRqIE.H7.Cd4tAR*", "http://ho*st/x", "http://a..b/", "http://h%41st/",
        "http://[fe80::1%25eth0]/", "http://[v1.x]/",
    ])
    func hostsThatAreNotNamesOrAddressesAreRefused(text: String) {
        let error = #expect(throws: SluiceError.self) { try EndpointURL(text, schemes: EndpointURL.webhookSchemes, field: "notify") }
        #expect(error?.field == "notify")
    }

    @Test func namesAndAddressesAreHosts() throws {
        for text in [
            "http://hooks.example:9000/x", "http://127.0.0.1/", "http://[::1]:8080/", "http://[::ffff:10.0.0.1]/", "http://LOCALHOST/",
        ] {
            #expect(try EndpointURL(text, schemes: EndpointURL.webhookSchemes, field: "notify").text == text)
        }
    }

    @Test func overTwoKiBIsRefused() {
        let long = "https://example.com/" + String(repeating: "a", count: 2048)
        #expect(throws: SluiceError.self) { try EndpointURL(long, schemes: EndpointURL.webhookSchemes, field: "notify") }
    }

    @Test func redactionHidesOnlyTheUserInformation() {
        #expect(EndpointURL.redact("http://a:b@h:1/p?q=@x") == "http://***@h:1/p?q=@x")
        #expect(EndpointURL.redact("http://h:1/p?q=@x") == "http://h:1/p?q=@x")
        #expect(EndpointURL.redact("not a url") == "not a url")
    }
}

struct ProxySettingsTests {
    @Test func theEnvironmentIsReadAsCurlReadsIt() throws {
        let settings = try ProxySettings.from(
            flag: nil,
            environment: [
                "HTTP_PROXY": "http://ignored:1", "https_proxy": "secure:3128", "all_proxy": "socks5://all:1080",
                "NO_PROXY": " .internal.example , 10.0.0.0/8,[::1] ",
            ])
        // Upper-case HTTP_PROXY is ignored (httpoxy): plain http goes through all_proxy.
        #expect(settings.proxy(scheme: "http", host: "example.com")?.text == "socks5://all:1080")
        // A bare host:port is http.
        #expect(settings.proxy(scheme: "https", host: "example.com")?.text == "http://secure:3128")
        for direct in ["internal.example", "a.internal.example", "10.1.2.3", "[::1]", "::1"] {
            #expect(settings.proxy(scheme: "https", host: direct) == nil, "\(direct)")
        }
        for proxied in ["example.internal", "xinternal.example", "11.0.0.1", "127.0.0.1"] {
            #expect(settings.proxy(scheme: "https", host: proxied) != nil, "\(proxied)")
        }
    }

    @Test func theFlagWinsAndAJobsOwnProxyAlwaysApplies() throws {
        let settings = try ProxySettings.from(
            flag: "http://flag:1",
            environment: [
                "http_proxy": "http://env:1", "no_proxy": "*",
            ])
        let own = try EndpointURL.proxy("socks5://own:1080", field: "proxy")
        #expect(settings.proxy(scheme: "http", host: "example.com") == nil, "no_proxy=* sends everything direct")
        #expect(settings.proxy(scheme: "http", host: "example.com", jobProxy: own) == own)
        let withoutBypass = try ProxySettings.from(flag: "http://flag:1", environment: ["http_proxy": "http://env:1"])
        #expect(withoutBypass.proxy(scheme: "http", host: "example.com")?.host == "flag")
    }

    @Test func aBadVariableIsAnErrorNamingIt() {
        #expect(throws: SluiceError.self) { try ProxySettings.from(flag: nil, environment: ["https_proxy": "ftp://x:1"]) }
        #expect(throws: SluiceError.self) { try ProxySettings.from(flag: "gopher://x", environment: [:]) }
    }
}

struct WebhookScheduleTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func waitsDoubleUpToTheCapWithinTheirJitteredHalf() {
        let schedule = WebhookSchedule(retryFor: 86_400, base: 5, cap: 60)
        for (attempts, full) in [(1, 5.0), (2, 10), (3, 20), (4, 40), (5, 60), (30, 60)] {
            let low = schedule.nextAttempt(attempts: attempts, createdAt: start, now: start, jitter: 0)!
            let high = schedule.nextAttempt(attempts: attempts, createdAt: start, now: start, jitter: 1)!
            #expect(low.timeIntervalSince(start) == full / 2)
            #expect(high.timeIntervalSince(start) == full)
        }
    }

    @Test func theLastTryFallsAtTheLimitAndThenItGivesUp() {
        let schedule = WebhookSchedule(retryFor: 100, base: 60, cap: 3600)
        let late = start.addingTimeInterval(90)
        #expect(schedule.nextAttempt(attempts: 3, createdAt: start, now: late, jitter: 1) == start.addingTimeInterval(100))
        #expect(schedule.nextAttempt(attempts: 4, createdAt: start, now: start.addingTimeInterval(100), jitter: 0) == nil)
    }

    @Test func aDeliveryIsDeliveredByA2xxAndFailsWhenTheScheduleGivesUp() {
        let schedule = WebhookSchedule(retryFor: 10, base: 1, cap: 1)
        var delivery = WebhookDelivery(id: "d", jobID: "j", event: .completed, url: "http://u:p@h/x", body: "{}", createdAt: start)
        delivery.attempted(status: 503, error: "the receiver answered 503", at: start, schedule: schedule, jitter: 0)
        #expect(delivery.state == .pending && delivery.attempts == 1 && delivery.nextAttemptAt == start.addingTimeInterval(0.5))
        delivery.attempted(status: 204, error: nil, at: start.addingTimeInterval(1), schedule: schedule, jitter: 0)
        #expect(delivery.state == .delivered && delivery.nextAttemptAt == nil && delivery.deliveredAt != nil)
        var failing = WebhookDelivery(id: "e", jobID: "j", event: .failed, url: "http://h/x", body: "{}", createdAt: start)
        failing.attempted(status: nil, error: "timeout", at: start.addingTimeInterval(11), schedule: schedule, jitter: 0)
        #expect(failing.state == .failed && failing.nextAttemptAt == nil)
        #expect(delivery.json.text.contains("\"url\":\"http://***@h/x\""))
    }

    @Test func durationsAreReadWithTheirUnits() {
        #expect(DurationText.seconds("90s") == 90)
        #expect(DurationText.seconds("30m") == 1800)
        #expect(DurationText.seconds("24h") == 86_400)
        #expect(DurationText.seconds("7d") == 604_800)
        #expect(DurationText.seconds("45") == 45)
        for bad in ["", "h", "-5s", "1.5h", "0", "400d", "١٢s", "99999999999"] {
            #expect(DurationText.seconds(bad) == nil, "\(bad)")
        }
    }
}
