/// Whether `serve` could listen on its address, asked before anything starts: a port in use
/// is told at once, with the port and what to do, instead of a library's bind error after
/// the job service had started (issue 36). The socket is bound with `SO_REUSEADDR`, as the
/// server binds it, and closed at once.
public enum ListenCheck {
    /// Why nothing can listen on `host:port`, in words for the operator; nil when it can
    /// (or when `host` is a name this check does not resolve: the server then says).
    public static func problem(host: String, port: Int) -> String? {
        guard port > 0 else { return nil }
        var hints = SystemResolver.streamHints(flags: AI_PASSIVE | AI_NUMERICSERV)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        let entry = first.pointee
        let descriptor = socket(entry.ai_family, entry.ai_socktype, entry.ai_protocol)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, entry.ai_addr, entry.ai_addrlen) != 0 else { return nil }
        return message(errno: errno, host: host, port: port)
    }

    /// The sentence for a failed bind's `errno`.
    public static func message(errno code: Int32, host: String, port: Int) -> String {
        let address = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        switch code {
        case EADDRINUSE:
            return "cannot listen on \(address): the port is in use by another program (another sluice?); "
                + "stop it, or choose another port with --port \(port == 65535 ? 8080 : port + 1)"
        case EACCES:
            return "cannot listen on \(address): permission denied (ports below 1024 need root); choose another port with --port 8080"
        case EADDRNOTAVAIL:
            return "cannot listen on \(address): \(host) is not an address of this machine; check --host"
        default:
            return "cannot listen on \(address)"
        }
    }
}
