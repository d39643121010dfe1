#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// The tests' own child processes (`Spawned`), in place of Foundation's `Process`, whose
/// `run()` on Linux reads past `/proc/self/fd` entries and once crashed a whole test run.
@Suite struct SpawnedTests {
    @Test func statusOutputErrorsAndInputComeBack() throws {
        let echoed = try Spawned.run("/bin/sh", ["-c", "cat; echo err >&2; exit 3"], input: "in\n")
        #expect(echoed.status == 3)
        #expect(String(decoding: echoed.stdout, as: UTF8.self) == "in\n")
        #expect(String(decoding: echoed.stderr, as: UTF8.self) == "err\n")
        let environment = try Spawned.run("/bin/sh", ["-c", "echo $ONLY"], environment: ["ONLY": "this"])
        #expect(String(decoding: environment.stdout, as: UTF8.self) == "this\n")
    }

    /// Foundation reports a signalled child by its signal's number: so does `Spawned`.
    @Test func aSignalledChildSaysWhichSignal() throws {
        let child = try Spawned("/bin/sleep", ["30"])
        #expect(child.isRunning)
        kill(child.pid, SIGKILL)
        child.waitUntilExit()
        #expect(!child.isRunning)
        #expect(child.wasSignalled)
        #expect(child.terminationStatus == SIGKILL)
    }

    /// A child has its standard streams and nothing else of ours: a pipe made for one child
    /// is never held open by another (its reader would wait for that child to exit). Many
    /// spawns with many descriptors open, as the suites make them.
    @Test func childrenInheritNoDescriptorOfOurs() throws {
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<300 {
            let ends = try Spawned.pipe()
            held += [ends.read, ends.write]
        }
        for _ in 0..<50 {
            let listed = try Spawned.run("/bin/ls", ["/proc/self/fd"])
            #expect(listed.status == 0)
            let descriptors = String(decoding: listed.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
            // 0, 1, 2 and the one `ls` opened to read the directory.
            #expect(descriptors.allSatisfy { $0 <= 3 }, "\(descriptors)")
        }
    }
}
