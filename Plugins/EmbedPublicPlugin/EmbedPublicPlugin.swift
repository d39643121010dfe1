import Foundation
import PackagePlugin

/// Turns the package's `public/` into a Swift source of the target it is applied to
/// (`PublicFiles`), so the dashboard and `openapi.yaml` are in the binary. Every file of
/// `public/` is an input: an edit rebuilds it.
@main
struct EmbedPublicPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "public")
        var inputs: [URL] = []
        if let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let file as URL in walker where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                inputs.append(file)
            }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedPublicFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding public/ (\(inputs.count) files)",
                executable: try context.tool(named: "EmbedPublic").url,
                arguments: [directory.path, output.path],
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}
