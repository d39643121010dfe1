public import SluiceCore

/// The token scope each aria2 method needs: reading methods need `read`, adding a download
/// `add`, anything else `admin` (deny by default: a method added later needs `admin` unless
/// it is listed here).
public enum Aria2Scope {
    static let reads: Set<String> = [
        "aria2.tellStatus", "aria2.getUris", "aria2.getFiles", "aria2.getPeers", "aria2.getServers", "aria2.tellActive",
        "aria2.tellWaiting", "aria2.tellStopped", "aria2.getOption", "aria2.getGlobalOption", "aria2.getGlobalStat",
        "aria2.getVersion", "aria2.getSessionInfo", "system.listMethods", "system.listNotifications",
    ]
    static let additions: Set<String> = ["aria2.addUri", "aria2.addTorrent", "aria2.addMetalink"]

    public static func required(method: String) -> TokenScope {
        if reads.contains(method) { return .read }
        if additions.contains(method) { return .add }
        return .admin
    }

    /// The error a valid token outside its scope gets: aria2's code 1, its message naming
    /// what was missing (aria2 itself has a single secret, and no such error).
    public static func refusal(method: String, scope: TokenScope) -> Aria2Failure {
        Aria2Failure("Forbidden: \(method) needs a token of scope \(required(method: method).rawValue), not \(scope.rawValue)")
    }
}
