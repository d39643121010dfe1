import Foundation
import Hummingbird
import NIOCore

/// The dashboard's files from memory (`EmbeddedPublic`), for Hummingbird's
/// `FileMiddleware`: the same answers as from a directory (types, `ETag`, ranges,
/// `index.html` for `/`), with nothing read from disk.
struct EmbeddedFileProvider: FileProvider {
    struct FileAttributes: FileMiddlewareFileAttributes, Sendable {
        let isFolder: Bool
        let size: Int
        let modificationDate: Date
    }

    let files: [String: Data]
    /// Every directory some file is under (`/`, `/js`).
    let folders: Set<String>
    /// When the files changed, as far as a cache can tell: this process's start.
    let loaded = Date()

    init(files: [String: Data]) {
        self.files = files
        var folders: Set<String> = ["/"]
        for path in files.keys {
            var parts = path.split(separator: "/").dropLast()
            while !parts.isEmpty {
                folders.insert("/" + parts.joined(separator: "/"))
                parts = parts.dropLast()
            }
        }
        self.folders = folders
    }

    /// The paths a `GET` finds: each file, and `/` for its `index.html`.
    var paths: Set<String> { Set(files.keys).union(["/"]) }

    func getFileIdentifier(_ path: String) -> String? {
        var normalized = "/" + path.split(separator: "/").joined(separator: "/")
        if path.hasSuffix("/"), normalized != "/" { normalized += "/" }
        return normalized
    }

    func getAttributes(id: String) async throws -> FileAttributes? {
        if let data = files[id] { return FileAttributes(isFolder: false, size: data.count, modificationDate: loaded) }
        let folder = id.count > 1 && id.hasSuffix("/") ? String(id.dropLast()) : id
        if folders.contains(folder) { return FileAttributes(isFolder: true, size: 0, modificationDate: loaded) }
        return nil
    }

    func loadFile(id: String, context: some RequestContext) async throws -> ResponseBody {
        ResponseBody(byteBuffer: ByteBuffer(bytes: files[id] ?? Data()))
    }

    func loadFile(id: String, range: ClosedRange<Int>, context: some RequestContext) async throws -> ResponseBody {
        let data = files[id] ?? Data()
        let bounded = range.clamped(to: 0...max(0, data.count - 1))
        return ResponseBody(byteBuffer: ByteBuffer(bytes: data.isEmpty ? Data() : data[bounded]))
    }
}
