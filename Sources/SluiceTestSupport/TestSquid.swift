import Foundation
import Synchronization

/// Squid from Debian, with Debian's default access rules, as the forward proxy users have:
/// `scripts/squid.sh` runs it on 127.0.0.1 in a temporary directory. `scripts/test.sh`
/// starts one for the run and names it in `SLUICE_TEST_SQUID` (its request log in
/// `SLUICE_TEST_SQUID_LOG`); a run without it starts its own on first use. Where Squid
/// cannot be had, `unavailable` says why and the tests that need it are skipped.
public enum TestSquid {
    public struct Proxy: Sendable {
        /// `127.0.0.1:PORT`
        public let address: String
        /// Squid's access log: one line per request, written when the request ends.
        public let log: String

        public var url: String { "http://" + address }

        /// The log's text so far.
        public var logged: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        /// Waits until the log has a line containing `text` (Squid writes a line when a
        /// request ends); false after the deadline.
        public func waitForLogLine(containing text: String, timeout: Duration = .seconds(10)) async throws -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if logged.contains(text) { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return logged.contains(text)
        }
    }

    private static let shared = Mutex<Result<Proxy, TestPostgres.Failure>?>(nil)

    /// Why Squid cannot be used here, or nil when it can.
    public static var unavailable: String? {
        if case .failure(let failure) = proxy() { return failure.description }
        return nil
    }

    /// The run's Squid.
    public static func proxy() -> Result<Proxy, TestPostgres.Failure> {
        shared.withLock { cached in
            if let cached { return cached }
            let environment = ProcessInfo.processInfo.environment
            let result: Result<Proxy, TestPostgres.Failure>
            if let address = environment["SLUICE_TEST_SQUID"], !address.isEmpty, let log = environment["SLUICE_TEST_SQUID_LOG"] {
                result = .success(Proxy(address: address, log: log))
            } else {
                result = Result {
                    let directory = "/tmp/sluice-squid-" + UUID().uuidString.prefix(8).lowercased()
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    _ = try TestPostgres.run(TestPostgres.repositoryRoot + "/scripts/squid.sh", ["install"])
                    let address = try TestPostgres.run(TestPostgres.repositoryRoot + "/scripts/squid.sh", ["start", directory])
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                    stopAtExit.withLock { $0 = directory }
                    atexit {
                        if let directory = TestSquid.stopAtExit.withLock({ $0 }) {
                            _ = try? TestPostgres.run(TestPostgres.repositoryRoot + "/scripts/squid.sh", ["stop", directory])
                            try? FileManager.default.removeItem(atPath: directory)
                        }
                    }
                    return Proxy(address: address, log: directory + "/access.log")
                }.mapError { TestPostgres.Failure(description: "\($0)") }
            }
            cached = result
            return result
        }
    }

    static let stopAtExit = Mutex<String?>(nil)
}
