import SluiceCore
import Testing

/// `Link` values as RFC 6249 mirrors use them: targets resolved against the answer's URL,
/// `rel` and `pri` read, quoted parameters taken whole, anything but http and https dropped.
@Suite struct LinkHeaderTests {
    static let base = "https://origin.example/pub/file.iso?x=1"

    @Test func duplicatesComeMostPreferredFirst() {
        let values = [
            #"<http://b.example/file.iso>; rel=duplicate; pri=2; geo=de, <http://a.example/file.iso>; rel="duplicate"; pri=1"#,
            #"</mirror/file.iso>; rel=duplicate, <http://c.example/f>; rel=duplicate; pri=2"#,
            #"<http://meta.example/file.meta4>; rel=describedby; type="application/metalink4+xml""#,
        ]
        #expect(
            LinkHeader.duplicates(values, base: Self.base) == [
                "http://a.example/file.iso", "http://b.example/file.iso", "http://c.example/f", "https://origin.example/mirror/file.iso",
            ])
        let described = LinkHeader.links(values, base: Self.base).first { $0.relations.contains("describedby") }
        #expect(described?.type == "application/metalink4+xml" && described?.target == "http://meta.example/file.meta4")
    }

    @Test func quotedParametersAndOtherSchemesAndGarbage() {
        let values = [
            #"<ftp://x.example/f>; rel=duplicate, <http://ok.example/f>; title="a, b; c"; rel="alternate duplicate""#,
            "no link here", "<http://cut.example/f>; rel=\"duplicate",
        ]
        let links = LinkHeader.links(values, base: Self.base)
        #expect(links.map(\.target) == ["http://ok.example/f"], "\(links)")
        #expect(links.first?.relations == ["alternate", "duplicate"])
        #expect(LinkHeader.links([String(repeating: "<http://a.example/>; rel=duplicate, ", count: 200)], base: Self.base).count == 64)
    }
}
