/// `POST /tokens`: `{"name": "firefox", "scope": "add"}`; unknown keys are refused, so a
/// misspelt `scope` never makes a token of another scope.
public struct CreateTokenRequest: Decodable, Sendable {
    public var name: String
    public var scope: TokenScope

    public init(from decoder: any Decoder) throws {
        let body = try PatchBody(decoder, allowed: ["name", "scope"])
        guard let name = try body.value(String.self, "name") else {
            throw SluiceError(.invalidField, "name is required", field: "name")
        }
        try AccessToken.validate(name: name)
        guard let scopeText = try body.value(String.self, "scope") else {
            throw SluiceError(.invalidField, "scope is required: read, add or admin", field: "scope")
        }
        guard let scope = TokenScope(rawValue: scopeText) else {
            throw SluiceError(.invalidField, "scope must be read, add or admin", field: "scope")
        }
        self.name = name
        self.scope = scope
    }
}
