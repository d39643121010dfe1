import Foundation
import SluiceSystem

extension ChildProcess {
    /// `sluice serve --port 0 --data DATA ARGUMENTS` for the duration of `body`, which gets
    /// its `http://127.0.0.1:PORT`; stopped with SIGTERM after, whether `body` threw or not.
    /// With `fakedClock`, under `faketime -f FAKEDCLOCK` (`ChildProcess(fakedClock:)`);
    /// `exited` is told how it exited after `body`.
    public static func serving(
        data: String, _ arguments: [String] = [], fakedClock: String? = nil,
        exited: (_ status: Int32, _ stderr: String) -> Void = { _, _ in }, _ body: (String) async throws -> Void
    ) async throws {
        let serve = try ChildProcess(arguments: ["serve", "--port", "0", "--data", data] + arguments, fakedClock: fakedClock)
        let line = try await serve.waitForLine(containing: "listening on http://127.0.0.1:")
        let url = String(line[line.range(of: "http://")!.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            try await body(url)
        } catch {
            serve.signal(SIGTERM)
            _ = try? await serve.finish(timeout: .seconds(10))
            throw error
        }
        serve.signal(SIGTERM)
        // Its stop is not what these tests are about (ServeCommandTests time it): under CI's
        // load, a download stopped with it (a `fsync` of a partial file) took it past 10 s.
        let (status, _, stderr) = try await serve.finish(timeout: .seconds(30))
        exited(status, stderr)
    }
}
