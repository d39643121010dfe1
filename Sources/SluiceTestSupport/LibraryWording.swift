/// Words only a library says (a type name, an errno string): none may reach a person, in a
/// job's error, the CLI's output or the dashboard (issue 36).
public enum LibraryWording {
    public static let markers = [
        "Error(", "Error.", "errno", "(error set)", "NIOSSL", "BoringSSL", "HTTPClientError", "SocketAddressError", "IOError",
        "ChannelError", "NIOConnectionError", "descriptor:", "UnknownHost", "remoteConnectionClosed", "connectTimeout",
        "DatabaseError", "PSQLError", "SQLite error",
    ]

    /// The first marker `text` holds, if any.
    public static func found(in text: String) -> String? {
        markers.first { text.contains($0) }
    }
}
