import HTTPTypes

/// Which other sites' pages may call `/jsonrpc` (`--allowed-origins`: AriaNg served from
/// elsewhere), and the CORS headers that tell their browsers so. A listed origin is taken
/// as this service's own for `/jsonrpc` alone; every other origin gets no CORS header, and
/// the browser guard's 403 or no WebSocket. Decisions only: the routes apply them.
struct CrossOriginPolicy: Sendable {
    let origins: Set<WebOrigin>

    /// How long a browser may keep a preflight's answer.
    static let maxAge = 600

    /// Request headers a page may send with its call: the ones a JSON-RPC client needs and
    /// none that carries a credential (the token travels in the call).
    static let harmlessHeaders: Set<String> = ["content-type", "accept", "accept-language", "content-language", "x-requested-with"]

    init(_ origins: [String]) {
        self.origins = Set(origins.compactMap(WebOrigin.init))
    }

    /// Whether the `Origin` header names a listed origin.
    func allows(_ origin: String?) -> Bool {
        guard !origins.isEmpty, let origin, let parsed = WebOrigin(origin) else { return false }
        return origins.contains(parsed)
    }

    /// The headers of a call's answer: the origin allowed to read it, when it is listed.
    func responseHeaders(origin: String?) -> HTTPFields {
        var fields = HTTPFields()
        fields[.vary] = "Origin"
        if let origin, allows(origin) { fields[.accessControlAllowOrigin] = origin }
        return fields
    }

    /// The headers of `OPTIONS /jsonrpc`'s answer (a preflight): what a listed origin may
    /// send, and for how long that holds; nothing for any other origin.
    func preflightHeaders(origin: String?, requestedHeaders: String?) -> HTTPFields {
        var fields = HTTPFields()
        fields[.allow] = "POST, OPTIONS"
        fields[.vary] = "Origin"
        guard let origin, allows(origin) else { return fields }
        // Field names hold no spaces: what is around the commas goes.
        let requested = (requestedHeaders ?? "").split(separator: ",").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
        var allowed = ["content-type"]
        for name in requested where Self.harmlessHeaders.contains(name) && !allowed.contains(name) { allowed.append(name) }
        fields[.accessControlAllowOrigin] = origin
        fields[.accessControlAllowMethods] = "POST, OPTIONS"
        fields[.accessControlAllowHeaders] = allowed.joined(separator: ", ")
        fields[.accessControlMaxAge] = String(Self.maxAge)
        return fields
    }
}
