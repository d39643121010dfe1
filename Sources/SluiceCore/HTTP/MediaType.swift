/// `Content-Type` values chosen by file extension.
public enum MediaType {
    private static let byExtension: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8", "json": "application/json",
        "txt": "text/plain; charset=utf-8", "md": "text/markdown; charset=utf-8",
        "csv": "text/csv; charset=utf-8", "xml": "application/xml", "yaml": "application/yaml",
        "yml": "application/yaml", "svg": "image/svg+xml", "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "ico": "image/x-icon", "pdf": "application/pdf", "zip": "application/zip",
        "gz": "application/gzip", "tgz": "application/gzip", "bz2": "application/x-bzip2",
        "xz": "application/x-xz", "zst": "application/zstd", "tar": "application/x-tar",
        "iso": "application/x-iso9660-image", "img": "application/octet-stream",
        "deb": "application/vnd.debian.binary-package", "rpm": "application/x-rpm",
        "mp4": "video/mp4", "mkv": "video/x-matroska", "webm": "video/webm",
        "mp3": "audio/mpeg", "ogg": "audio/ogg", "flac": "audio/flac", "wav": "audio/wav",
        "wasm": "application/wasm",
    ]

    public static let octetStream = "application/octet-stream"

    /// The media type for a file name, `application/octet-stream` when unknown.
    public static func forFileName(_ name: some StringProtocol) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return octetStream }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? octetStream
    }
}
