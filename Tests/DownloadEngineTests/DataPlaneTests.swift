import Foundation
import Testing

@testable import DownloadEngine

@Suite struct DataPlaneTests {
    static func threadName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }

    @Test func aTaskThatPrefersTheDataPlaneRunsOnItsLoops() async throws {
        let names = await withTaskExecutorPreference(DataPlane.nextExecutor()) { () async -> [String] in
            var names = [Self.threadName()]
            try? await Task.sleep(for: .milliseconds(1))
            names.append(Self.threadName())
            return names
        }
        #expect(names.allSatisfy { $0.hasPrefix("NIO-ELT") })
    }
}
