import Foundation
import Synchronization

/// PostgreSQL for the tests, run by `scripts/postgres.sh` (PostgreSQL 15 from Debian, on
/// 127.0.0.1, in a temporary directory, as a user that is not root).
///
/// `scripts/test.sh` starts one server for the whole run and names it in
/// `SLUICE_TEST_POSTGRES`; a test run without it starts its own on first use. Each test
/// takes a database of its own. Where PostgreSQL cannot be run, `unavailable` says why
/// and the tests that need it are skipped with that message.
public enum TestPostgres {
    /// A server: its URL without a database, and its directory (for restarts).
    public struct Server: Sendable {
        public let directory: String
        /// `postgres://sluice:sluice@127.0.0.1:PORT`
        public let base: String

        public func url(database: String) -> String { base + "/" + database }

        /// Stops and starts the server again on the same port, keeping its data.
        public func restart() throws { _ = try TestPostgres.script(["restart", directory]) }
        public func stop() throws { _ = try TestPostgres.script(["stop", directory]) }

        /// Freezes the server with SIGSTOP (a stall as a failover or a partition looks from
        /// a node) and returns its processes, for `SIGCONT`. The postmaster first, and its
        /// children read only then: a backend it forked between a read and the postmaster's
        /// stop (a node reconnecting) was missed, and answered through the whole freeze
        /// (CI, `StoreOutageTests`).
        public func freeze() throws -> [Int32] {
            guard let postmaster = try processIDs().first else { return [] }
            kill(postmaster, SIGSTOP)
            let processes = try processIDs()
            for pid in processes { kill(pid, SIGSTOP) }
            return processes
        }

        /// The server's processes: the postmaster (first line of its pid file) and its
        /// children.
        public func processIDs() throws -> [Int32] {
            let pidFile = try String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)
            guard let postmaster = pidFile.split(separator: "\n").first.flatMap({ Int32($0) }) else { return [] }
            var children: [Int32] = []
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { continue }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 1, Int32(fields[1]) == postmaster { children.append(pid) }
            }
            return [postmaster] + children
        }
    }

    private static let shared = Mutex<Result<Server, Failure>?>(nil)

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Why PostgreSQL cannot be used here, or nil when it can.
    public static var unavailable: String? {
        if case .failure(let failure) = sharedServer() { return failure.description }
        return nil
    }

    /// The run's shared server.
    public static func sharedServer() -> Result<Server, Failure> {
        shared.withLock { cached in
            if let cached { return cached }
            let result: Result<Server, Failure>
            if let url = ProcessInfo.processInfo.environment["SLUICE_TEST_POSTGRES"], !url.isEmpty {
                result = .success(
                    Server(directory: ProcessInfo.processInfo.environment["SLUICE_TEST_POSTGRES_DIR"] ?? "", base: base(of: url)))
            } else {
                result = Result { try startServer() }.mapError { Failure(description: "\($0)") }
                if case .success(let server) = result {
                    // Stopped when the test process ends.
                    stopAtExit(server.directory)
                }
            }
            cached = result
            return result
        }
    }

    /// The servers this process started, stopped and removed when it ends.
    private static let startedServers = Mutex<[String]>([])
    private static let stopsAtExit: Void = {
        atexit {
            for directory in TestPostgres.startedServers.withLock({ $0 }) {
                _ = try? TestPostgres.script(["stop", directory])
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }()

    /// Stops and removes the server in `directory` when the test process ends. (A server of
    /// a test's own was only stopped: 47 MB left in /tmp per run.)
    static func stopAtExit(_ directory: String) {
        _ = stopsAtExit
        startedServers.withLock { $0.append(directory) }
    }

    /// The CA that issued the shared server's TLS certificate (`scripts/postgres.sh` makes
    /// one with the cluster), or nil where the server has none.
    public static var certificateAuthority: String? {
        if let file = ProcessInfo.processInfo.environment["SLUICE_TEST_POSTGRES_CA"], !file.isEmpty { return file }
        guard case .success(let server) = sharedServer() else { return nil }
        let file = server.directory + "/ca.crt"
        return FileManager.default.fileExists(atPath: file) ? file : nil
    }

    /// A new, empty database on the shared server; returns its URL.
    public static func newDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let server = try sharedServer().get()
        try createDatabase(name, on: server)
        return server.url(database: name)
    }

    /// The database for `key` (a test's data directory): made on first use, the same one
    /// after (a test that starts a second service on the data of a first).
    public static func database(for key: String) throws -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        let name = "t_" + String(hash, radix: 36)
        let server = try sharedServer().get()
        try createDatabase(name, on: server, ifMissing: true)
        return server.url(database: name)
    }

    /// Runs `sql` with psql on the database at `url`; returns what it printed (rows
    /// unaligned, no headers).
    @discardableResult
    public static func sql(_ sql: String, database url: String) throws -> String {
        try run("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t"], input: sql)
    }

    /// A server of the test's own (to restart it, or stop it, without disturbing others);
    /// stopped and removed by the returned server's `stop()` and at exit.
    public static func ownServer() throws -> Server {
        let server = try startServer()
        stopAtExit(server.directory)
        return server
    }

    private static func startServer() throws -> Server {
        let directory = "/tmp/sluice-pg-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try script(["install"])
        let url = try script(["start", directory]).trimmingCharacters(in: .whitespacesAndNewlines)
        return Server(directory: directory, base: base(of: url))
    }

    private static func createDatabase(_ name: String, on server: Server, ifMissing: Bool = false) throws {
        let sql =
            ifMissing
            ? "SELECT 'CREATE DATABASE \(name)' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '\(name)') \\gexec"
            : "CREATE DATABASE \(name)"
        _ = try run("/usr/bin/psql", [server.url(database: "sluice"), "-v", "ON_ERROR_STOP=1", "-q"], input: sql)
    }

    private static func base(of url: String) -> String {
        guard let slash = url.range(of: "/", options: .backwards), url[..<slash.lowerBound].hasSuffix("//") == false else { return url }
        return String(url[..<slash.lowerBound])
    }

    /// `scripts/postgres.sh ARGUMENTS`; returns what it printed.
    static func script(_ arguments: [String]) throws -> String {
        try run(repositoryRoot + "/scripts/postgres.sh", arguments)
    }

    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["PGCONNECT_TIMEOUT"] = "5"
        let (status, out, err) = try Spawned.run(executable, arguments, environment: environment, input: input)
        guard status == 0 else {
            throw Failure(
                description:
                    "\((executable as NSString).lastPathComponent) \(arguments.first ?? ""): \(String(decoding: err, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
        return String(decoding: out, as: UTF8.self)
    }
}
