import Foundation
import Glibc
import NIOPosix
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

    /// `sluice serve` lowers the data plane's priority below the API's: its loops (and the
    /// hashing pool) run at nice 10, the rest of the process as it was.
    @Test func theDataPlaneYieldsToTheRestOfTheProcess() async throws {
        DataPlane.yieldToControlPlane(niceness: 10)
        for _ in 0..<4 {
            let nice = await withTaskExecutorPreference(DataPlane.nextExecutor()) { () async -> Int32 in
                getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            }
            #expect(nice == 10)
        }
        let hashing = try await DataPlane.hashingPool.runIfActive { () -> Int32 in
            DataPlane.adoptPriority()
            return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        }
        #expect(hashing == 10)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == 0)
    }
}
