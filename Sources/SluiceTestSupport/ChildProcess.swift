import SluiceSystem
import Foundation
import Synchronization

/// The built `sluice` executable run as a child process, for tests of the command line,
/// signals and crash recovery.
public final class ChildProcess: @unchecked Sendable {
    private let process: Spawned
    private let output: FileHandle
    private let errors: FileHandle
    /// Everything printed so far, drained as it comes so that a chatty child never blocks
    /// on a full pipe.
    private let printed = Mutex<(stdout: Data, stderr: Data)>((Data(), Data()))
    /// Run under the `faketime` wrapper, which forks `sluice` and passes no signal on.
    private let wrapped: Bool

    /// The `sluice` binary next to the test bundle (both are built by `swift build --build-tests`).
    public static var sluiceExecutable: String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var directory = testBinary
        // The test binary may sit inside an .xctest bundle directory.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("sluice").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return testBinary.appendingPathComponent("sluice").path
    }

    /// The monotonic pass-through `scripts/faketime.sh shim` built, where `scripts/test.sh`
    /// found Debian's faketime: nil elsewhere, and the tests of a faked wall clock are skipped.
    public static var fakedClockShim: String? { ProcessInfo.processInfo.environment["SLUICE_TEST_FAKETIME_SHIM"] }

    /// Runs `sluice ARGUMENTS` (the built one, or the binary at `binary`: a copy), or, with
    /// `openFileLimit`, the same under `prlimit` with that soft limit on open files, or, with
    /// `fakedClock`, under Debian's `faketime -f FAKEDCLOCK` (`@2027-03-28 01:59:55`: its wall
    /// clock starts there and runs), its monotonic deadlines passed through (`fakedClockShim`).
    public init(
        arguments: [String], environment: [String: String] = [:], directory: String? = nil, openFileLimit: Int? = nil,
        binary: String? = nil, fakedClock: String? = nil
    ) throws {
        let executable: String
        let fullArguments: [String]
        var environment = environment
        if let fakedClock {
            guard let shim = Self.fakedClockShim else {
                throw RawHTTPClient.Failure(description: "no faketime here (SLUICE_TEST_FAKETIME_SHIM is unset)")
            }
            executable = "/usr/bin/faketime"
            fullArguments = ["-f", fakedClock, binary ?? Self.sluiceExecutable] + arguments
            environment["LD_PRELOAD"] = shim
            environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        } else if let openFileLimit {
            executable = "/usr/bin/prlimit"
            fullArguments = ["--nofile=\(openFileLimit):", binary ?? Self.sluiceExecutable] + arguments
        } else {
            executable = binary ?? Self.sluiceExecutable
            fullArguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        // The tests' servers are on 127.0.0.1: a proxy set on the machine running them must
        // not carry the child's requests (a test that wants one names it).
        for name in ["http_proxy", "https_proxy", "all_proxy", "HTTPS_PROXY", "ALL_PROXY", "no_proxy", "NO_PROXY", "SLUICE_PROXY"] {
            env[name] = nil
        }
        env.merge(environment) { $1 }
        wrapped = fakedClock != nil
        let output = try Spawned.pipe()
        let errors: (read: Int32, write: Int32)
        do {
            errors = try Spawned.pipe()
        } catch {
            close(output.read)
            close(output.write)
            throw error
        }
        defer {
            close(output.write)
            close(errors.write)
        }
        self.output = FileHandle(fileDescriptor: output.read, closeOnDealloc: true)
        self.errors = FileHandle(fileDescriptor: errors.read, closeOnDealloc: true)
        process = try Spawned(
            executable, fullArguments, environment: env, directory: directory, stdout: .descriptor(output.write),
            stderr: .descriptor(errors.write)
        )
        self.output.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.printed.withLock { $0.stdout.append(data) }
        }
        self.errors.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.printed.withLock { $0.stderr.append(data) }
        }
    }

    /// A child a test left running (it threw before `finish`) goes with it, and is reaped.
    deinit {
        if process.isRunning {
            if wrapped, let service = wrappedChild { kill(service, SIGKILL) }
            kill(process.pid, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The `sluice` process: the wrapper's child when run under `faketime`.
    public var pid: Int32 { wrapped ? wrappedChild ?? process.pid : process.pid }

    public func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// The child the `faketime` wrapper forked, once it has.
    private var wrappedChild: Int32? {
        let children = try? String(contentsOfFile: "/proc/\(process.pid)/task/\(process.pid)/children", encoding: .utf8)
        return children?.split(separator: " ").first.flatMap { Int32($0) }
    }

    /// Waits for the exit (polling, off the cooperative pool's blocking paths) and returns
    /// the status with everything printed.
    public func finish(timeout: Duration = .seconds(60)) async throws -> (status: Int32, stdout: String, stderr: String) {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                signal(SIGKILL)
                throw RawHTTPClient.Failure(description: "child process did not exit within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Let the handlers take what the child printed last.
        try await Task.sleep(for: .milliseconds(50))
        output.readabilityHandler = nil
        errors.readabilityHandler = nil
        let (out, err) = printed.withLock { $0 }
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// What the child printed so far, on both streams.
    public var printedSoFar: (stdout: String, stderr: String) {
        let (out, err) = printed.withLock { $0 }
        return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// Reads standard output until a line containing `marker` appears.
    public func waitForLine(containing marker: String, timeout: Duration = .seconds(30)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var text = ""
        while ContinuousClock.now < deadline {
            text = String(decoding: printed.withLock { $0.stdout }, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.contains(marker) }) { return String(line) }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw RawHTTPClient.Failure(description: "no line with \(marker) in: \(text)")
    }
}
