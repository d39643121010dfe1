import SluiceSystem
import Foundation
import Synchronization

// glibc's, declared by its headers only with _GNU_SOURCE, which the Glibc module lacks.
@_silgen_name("pipe2") private func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
@_silgen_name("posix_spawn_file_actions_addchdir_np")
private func addChangeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>) -> Int32
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32

/// A child process started with `posix_spawn`, for the tests' helpers (psql, mount, curl,
/// the scripts, `sluice` itself).
///
/// Not Foundation's `Process`: on Linux its `run()` (swift-corelibs-foundation before its
/// fix 81eb85a, so Swift 6.3.1's) copies 256 bytes of every `/proc/self/fd` entry `readdir`
/// returns, past the end of short ones, and crashed the whole test process now and then
/// (`Process.run() + 6428`, a bad pointer in memmove, in a local run of `scripts/test.sh`).
///
/// A child gets its three standard streams and no other descriptor of ours (as `Process`
/// did), and every signal at its default; its pipes are made close-on-exec (`pipe2`).
public final class Spawned: Sendable {
    public let pid: pid_t
    /// The wait status, once the child has been reaped.
    private let status = Mutex<Int32?>(nil)

    /// Where one of the child's standard streams goes: `/dev/null`, or a descriptor of the
    /// parent's (the child gets its own copy).
    public enum Stream: Sendable {
        case null
        case descriptor(Int32)
    }

    /// A pipe, both ends close-on-exec: `(read, write)`.
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard systemPipe2(&ends, O_CLOEXEC) == 0 else { throw Failure(description: "pipe2: errno \(errno)") }
        return (ends[0], ends[1])
    }

    /// A child that exits before reading its input makes our write fail (EPIPE), not end
    /// the test process with SIGPIPE.
    private static let ignoreBrokenPipes: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts `executable` (a path) with `arguments`, in `environment` (this process's when
    /// nil) and `directory` (this process's when nil).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [(stdin, STDIN_FILENO), (stdout, STDOUT_FILENO), (stderr, STDERR_FILENO)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        // Nothing of ours but the three streams: descriptors that are not close-on-exec
        // (the test runner has some) would keep a pipe open, or a port bound, in the child.
        _ = addCloseFrom(&actions, 3)
        if let directory { _ = addChangeDirectory(&actions, directory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { env?.forEach { free($0) } }
        var pid: pid_t = 0
        let result = argv.withUnsafeBufferPointer { argv in
            if let env {
                return env.withUnsafeBufferPointer { env in
                    posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, env.baseAddress!)
                }
            }
            return posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, environ)
        }
        guard result == 0 else {
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    /// Whether the child has not exited yet (it is reaped when it has).
    public var isRunning: Bool {
        status.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid { status = raw }
            return reaped == 0
        }
    }

    /// Waits for the child to exit, blocking this thread (and any other asking about it).
    public func waitUntilExit() {
        status.withLock { status in
            while status == nil {
                var raw: Int32 = 0
                let reaped = waitpid(pid, &raw, 0)
                if reaped == pid {
                    status = raw
                } else if reaped == -1, errno != EINTR {
                    return
                }
            }
        }
    }

    /// The exit code, or the number of the signal that ended it (as Foundation's `Process`
    /// says it); -1 while it runs.
    public var terminationStatus: Int32 {
        guard !isRunning, let raw = status.withLock({ $0 }) else { return -1 }
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }

    /// Whether a signal ended it.
    public var wasSignalled: Bool {
        guard !isRunning, let raw = status.withLock({ $0 }) else { return false }
        let signal = raw & 0x7f
        return signal != 0 && signal != 0x7f
    }

    /// Runs `executable` to its end: what it printed on standard output and error, and its
    /// status. `input` is written to its standard input.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil
    ) throws -> (status: Int32, stdout: Data, stderr: Data) {
        _ = ignoreBrokenPipes
        var made: [Int32] = []
        let child: Spawned
        let output: (read: Int32, write: Int32)
        let errors: (read: Int32, write: Int32)
        let stdin: (read: Int32, write: Int32)?
        do {
            output = try pipe()
            made += [output.read, output.write]
            errors = try pipe()
            made += [errors.read, errors.write]
            stdin = input == nil ? nil : try pipe()
            if let stdin { made += [stdin.read, stdin.write] }
            child = try Spawned(
                executable, arguments, environment: environment, stdin: stdin.map { .descriptor($0.read) } ?? .null,
                stdout: .descriptor(output.write), stderr: .descriptor(errors.write)
            )
        } catch {
            made.forEach { close($0) }
            throw error
        }
        close(output.write)
        close(errors.write)
        // The input is written beside the readers: a child that writes a full pipe before it
        // reads all its input would otherwise wait on us while we wait on it.
        if let stdin, let input {
            close(stdin.read)
            let descriptor = stdin.write
            Thread.detachNewThread {
                let writer = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                try? writer.write(contentsOf: Data(input.utf8))
                try? writer.close()
            }
        }
        // Both streams at once: a child that fills one pipe while the other is read would
        // wait forever.
        let errorText = Mutex(Data())
        let readerDone = DispatchSemaphore(value: 0)
        let errorsRead = errors.read
        Thread.detachNewThread {
            let data = FileHandle(fileDescriptor: errorsRead, closeOnDealloc: true).readDataToEndOfFile()
            errorText.withLock { $0 = data }
            readerDone.signal()
        }
        let out = FileHandle(fileDescriptor: output.read, closeOnDealloc: true).readDataToEndOfFile()
        readerDone.wait()
        child.waitUntilExit()
        return (child.terminationStatus, out, errorText.withLock { $0 })
    }
}
