@testable import DownloadEngine
import Foundation
import Testing

/// Which hosts the engine fetches: a percent-encoded ASCII character in a host (`%40`, a
/// way to another host through a proxy) never; an internationalised name, whose UTF-8 a
/// URL may hold percent-encoded, always (the reviewer's case).
@Suite struct URLOriginTests {
    @Test(arguments: ["http://bücher.example/x", "http://b%C3%BCcher.example/x", "https://例え.jp/a", "http://[fe80::1%25eth0]/x"])
    func internationalNamesAndZonesAreFetched(_ url: String) {
        #expect(URLOrigin(url) != nil, "\(url)")
    }

    @Test(arguments: ["http://x%40127.0.0.1/", "http://a%2fb/", "http://%41.example/", "http://a%2/", "http://a%zz/"])
    func encodedASCIIIsNot(_ url: String) {
        #expect(URLOrigin(url) == nil, "\(url)")
    }
}
