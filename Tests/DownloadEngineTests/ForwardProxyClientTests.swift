@testable import DownloadEngine
import Foundation
import Testing

@Suite struct ForwardProxyClientTests {
    /// The request line in absolute form carries neither the URL's user information nor its
    /// fragment (RFC 9110 §4.2.4): credentials in a URL never go to the proxy in the target.
    @Test(arguments: [
        ("http://user:secret@example.com:8080/a/b%20c?x=1#sha256=ab", "http://example.com:8080/a/b%20c?x=1"),
        ("http://example.com", "http://example.com/"),
        ("HTTP://Example.com/file#frag", "http://Example.com/file"),
        ("http://[::1]:81/x?q", "http://[::1]:81/x?q"),
    ])
    func absoluteFormHasNoUserInformationOrFragment(url: String, target: String) throws {
        #expect(ForwardProxyClient.absoluteForm(try #require(URL(string: url))) == target)
    }
}
