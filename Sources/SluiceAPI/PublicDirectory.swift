import Foundation

/// Where the dashboard's files are: `--public DIR` / `SLUICE_PUBLIC`, else a `public/`
/// holding `index.html` found next to the executable or in a directory above it (the
/// package root when run from `.build/`, `/app` in the container). Never the working
/// directory: the service must behave the same wherever it is started.
public enum PublicDirectory {
    public static func locate(explicit: String? = nil) -> String? {
        if let explicit { return explicit }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<6 {
            for candidate in ["public", "share/sluice/public"] {
                let path = directory.appendingPathComponent(candidate).path
                if FileManager.default.fileExists(atPath: path + "/index.html") { return path }
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }
}
