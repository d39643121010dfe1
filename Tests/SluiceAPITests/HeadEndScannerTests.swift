import SluiceAPI
import Testing

/// The end of a first request head, found in bytes however they are split.
@Suite struct HeadEndScannerTests {
    static func ends(_ chunks: [String]) -> Bool {
        var scanner = HeadEndScanner()
        for chunk in chunks { scanner.scan(Array(chunk.utf8)) }
        return scanner.ended
    }

    @Test func aBlankLineEndsTheHeadHoweverItIsSplit() {
        #expect(Self.ends(["GET / HTTP/1.1\r\nHost: a\r\n\r\n"]))
        #expect(Self.ends(["GET / HTTP/1.1\r\nHost: a\r", "\n", "\r", "\n"]))
        #expect(Self.ends(["GET / HTTP/1.1\nHost: a\n\n"]))
        #expect(Self.ends(["GET / HTTP/1.1\r\n\r\nbody and more"]))
        #expect(Self.ends(["\r\n", "GET / HTTP/1.1\r\n\r\n"]))
    }

    @Test func aHalfSentHeadHasNotEnded() {
        #expect(!Self.ends([]))
        #expect(!Self.ends(["GET / HTTP/1.1\r\nHost: a\r\nX-Slow: "]))
        #expect(!Self.ends(["GET / HTTP/1.1\r\n", "Host: a\r\n", "X: \r"]))
        #expect(!Self.ends(["GET / HTTP/1.1\r\nA: \r\r\n"]))
        // Empty lines before a request line, which the parser skips, are not a head.
        #expect(!Self.ends(["\r\n\r\n"]))
        #expect(!Self.ends(["\n\n\n", "\r\n"]))
    }
}
