import Foundation
import HTTPTypes
import Hummingbird
import SluiceCore
import SluiceHTTP

/// The dashboard's files answer `GET` and `HEAD`; any other method on one of them is 405
/// with `Allow`, like every other known path, not the 404 of a path that does not exist.
/// The set of paths is read once at start, so no request makes the service look at disk.
struct StaticFilesMethodMiddleware<Context: RequestContext>: RouterMiddleware {
    let paths: Set<String>

    init(paths: Set<String>) {
        self.paths = paths.union(["/"])
    }

    init(directory: String) {
        var paths: Set<String> = ["/"]
        let root = URL(fileURLWithPath: directory)
        if let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let file as URL in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                paths.insert(String(file.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count)))
            }
        }
        self.paths = paths
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method != .get, request.method != .head, paths.contains(request.uri.path) else {
            return try await next(request, context)
        }
        return SluiceError(.methodNotAllowed, "the dashboard's files allow GET, HEAD").response(headers: [.allow: "GET, HEAD"])
    }
}
