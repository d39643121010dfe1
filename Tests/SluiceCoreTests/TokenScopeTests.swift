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

    @Test func tokenNamesAreShortAndPlain() throws {
        try AccessToken.validate(name: "firefox-1.2_x")
        for bad in ["", "a b", "a/b", "..", String(repeating: "a", count: 65), "é"] {
            #expect(throws: SluiceError.self) { try AccessToken.validate(name: bad) }
        }
    }
}
