import Foundation
import SluiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A test server stops gracefully, not by cancelling its task: cancelling while the kernel
/// still holds accepted connections dropped their NIO channels unfinished, which trapped
/// the whole test process ("Deinited NIOAsyncWriter without calling finish()", CI, stop 45).
@Suite struct RunningServerStopTests {
    @Test func connectionsArrivingAsTheServerStopsDoNotTrapTheProcess() async throws {
        for _ in 0..<20 {
            let sockets = try await withOrigin(root: NSTemporaryDirectory()) { port in
                // Connections the server has not yet served when its body returns.
                try (0..<64).map { _ in try connectLoopback(port: port) { _ in } }
            }
            for fd in sockets { close(fd) }
        }
    }
}
