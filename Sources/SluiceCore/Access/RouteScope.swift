/// The scope a REST request needs, decided from its method and the route the router chose
/// (`/jobs/{id}`), never the spelling of its path. Deny by default: a route added later
/// needs `admin` unless it only reads.
public enum RouteScope {
    /// Routes that read what only an administrator may see.
    static let adminReads: Set<String> = ["/tokens", "/tokens/{name}"]
    /// Routes whose `POST` creates jobs.
    static let creations: Set<String> = ["/jobs", "/jobs/batch"]

    public static func required(method: String, route: String) -> TokenScope {
        if adminReads.contains(route) { return .admin }
        switch method.uppercased() {
        case "GET", "HEAD": return .read
        case "POST" where creations.contains(route): return .add
        default: return .admin
        }
    }
}
