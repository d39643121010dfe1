public import Foundation

/// The dashboard's files and `openapi.yaml` (the package's `public/`), compiled into the
/// binary by the `EmbedPublicPlugin` build step: a copied binary serves them with no
/// directory beside it.
public enum EmbeddedPublic {
    /// Every file by its path (`/index.html`, `/js/app.js`), decoded once.
    public static let files: [String: Data] = {
        var files: [String: Data] = [:]
        for (path, base64) in base64Files {
            files[path] = Data(base64Encoded: base64)
        }
        return files
    }()
}
