import Foundation
import Hummingbird
import SluiceCore

/// `/tokens`: the service's named tokens, made, listed and revoked with an `admin` token
/// (as `sluice token` does on the store). A new token's secret is in the answer to its
/// `POST` and nowhere else.
struct TokensController {
    let tokens: TokenRegistry

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.post("/tokens") { request, _ in
            let body = try await JSONCoding.decode(CreateTokenRequest.self, from: request)
            let (token, secret) = try await tokens.create(name: body.name, scope: body.scope)
            var fields = token.json
            fields.append(("token", .string(secret)))
            // The secret is in this answer: no cache may keep it.
            return JSONCoding.response(.object(fields), status: .created, headers: [.cacheControl: "no-store"])
        }
        router.get("/tokens") { _, _ in
            JSONCoding.response(.object([("tokens", .array(try await tokens.list().map { .object($0.json) }))]))
        }
        router.allowOnly([.get, .post], at: "/tokens")
        router.delete("/tokens/:name") { _, context in
            let name = try context.parameters.require("name")
            guard try await tokens.revoke(name: name) else { throw SluiceError(.notFound, "no token is named \(name)") }
            return Response(status: .noContent)
        }
        router.allowOnly([.delete], at: "/tokens/:name")
    }

}
