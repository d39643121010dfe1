import Foundation
import SluiceCore
import Testing

/// What each scope may do on a route (the table over every route is `ScopedTokenTests`).
@Suite struct TokenScopeTests {
    @Test func scopesIncludeTheOnesBelow() {
        #expect(TokenScope.admin.allows(.add) && TokenScope.admin.allows(.read))
        #expect(TokenScope.add.allows(.read) && !TokenScope.add.allows(.admin))
        #expect(!TokenScope.read.allows(.add))
    }

    @Test func readsNeedReadCreatingNeedsAddTheRestAdmin() {
        #expect(RouteScope.required(method: "GET", route: "/jobs") == .read)
        #expect(RouteScope.required(method: "HEAD", route: "/files/**") == .read)
        #expect(RouteScope.required(method: "POST", route: "/jobs") == .add)
        #expect(RouteScope.required(method: "POST", route: "/jobs/{id}/pause") == .admin)
        #expect(RouteScope.required(method: "PATCH", route: "/queue") == .admin)
        #expect(RouteScope.required(method: "GET", route: "/tokens") == .admin)
        // A route added later, with a method not listed, needs admin.
        #expect(RouteScope.required(method: "PUT", route: "/something/new") == .admin)
        #expect(RouteScope.required(method: "PROPFIND", route: "/jobs") == .admin)
    }

    static let names = [
        "firefox-1.2_x", "...", ".a", "..a", "a", String(repeating: "a", count: 64), "", "a b", "a/b", ".", "..",
        String(repeating: "a", count: 65), "é",
    ]

    @Test func tokenNamesAreShortAndPlain() throws {
        for good in ["firefox-1.2_x", "...", ".a", "..a", String(repeating: "a", count: 64)] { try AccessToken.validate(name: good) }
        for bad in ["", "a b", "a/b", ".", "..", String(repeating: "a", count: 65), "é"] {
            #expect(throws: SluiceError.self) { try AccessToken.validate(name: bad) }
        }
    }

    /// The spec's pattern for a token's name takes exactly the names the service takes
    /// (schemathesis, a random seed: `"."` matched the pattern and was refused).
    @Test func theSpecsPatternIsTheServicesRule() throws {
        let spec = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../../public/openapi.yaml"),
            encoding: .utf8)
        let line = try #require(spec.split(separator: "\n").first { $0.contains("pattern: '^([A-Za-z0-9_-]") })
        let pattern = String(line.split(separator: "'")[1])
        let regex = try NSRegularExpression(pattern: pattern)
        for name in Self.names {
            let matches = regex.firstMatch(in: name, range: NSRange(name.startIndex..., in: name)) != nil
            #expect(matches == ((try? AccessToken.validate(name: name)) != nil), "\(name)")
        }
    }
}
