import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// `sluice add|ls|show|pause|resume|rm|wait|queue` against a real service (issue 23): the
/// `--json` output decoded with the API's own types, `wait`'s exit codes, the token from
/// the environment and from a file, a service that is not there.
@Suite struct ClientCommandTests {
    static let token = "cl1ent-token"

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// A service with a token, for the duration of `body`, which gets its URL.
    static func withService(_ body: @Sendable (String) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try await ChildProcess.serving(data: directory.path + "/data", ["--token", token], body)
        }
    }

    /// `sluice ARGUMENTS` against `url`, the token in the environment.
    static func sluice(_ arguments: [String], _ url: String, environment: [String: String]? = nil) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        let run = try ChildProcess(arguments: arguments + ["--server", url], environment: environment ?? ["SLUICE_TOKEN": token])
        return try await run.finish(timeout: .seconds(60))
    }

    @Test func jobsAreAddedListedShownPausedResumedAndRemoved() async throws {
        try await Self.withService { url in
            let auth = "Authorization: Bearer \(Self.token)"
            // Bare ids, one per line.
            let added = try await Self.sluice(["add", "\(url)/testdata/1M?rate=256K", "\(url)/testdata/2K", "-H", auth, "--paused"], url)
            #expect(added.status == 0, "\(added.stderr)")
            let ids = added.stdout.split(separator: "\n").map(String.init)
            #expect(ids.count == 2 && ids.allSatisfy { $0.count >= 8 && !$0.contains(" ") }, "\(added.stdout)")
            // --json: the API's job, decoded with the API's type.
            let json = try await Self.sluice(["add", "\(url)/testdata/4K", "-o", "named.bin", "-H", auth, "--json"], url)
            let job = try Self.decoder.decode(JobSnapshot.self, from: Data(json.stdout.utf8))
            #expect(job.url == "\(url)/testdata/4K")
            // -o named its file: once done, the job says so.
            #expect(try await Self.sluice(["wait", job.id], url).status == 0)
            let done = try Self.decoder.decode(
                JobSnapshot.self, from: Data(try await Self.sluice(["show", job.id, "--json"], url).stdout.utf8))
            #expect(done.filename == "named.bin" && done.path == "named.bin", "\(String(describing: done.filename))")
            // The table: every job's full id and full name.
            let table = try await Self.sluice(["ls"], url)
            #expect(table.status == 0)
            #expect(table.stdout.hasPrefix("ID"))
            for id in ids + [job.id] { #expect(table.stdout.contains(id)) }
            struct List: Decodable { let jobs: [JobSnapshot] }
            let listed = try Self.decoder.decode(
                List.self, from: Data(try await Self.sluice(["ls", "--json", "--state", "paused"], url).stdout.utf8))
            #expect(Set(listed.jobs.map(\.id)) == Set(ids))
            let shown = try Self.decoder.decode(
                JobSnapshot.self, from: Data(try await Self.sluice(["show", ids[0], "--json"], url).stdout.utf8))
            #expect(shown.id == ids[0] && shown.state == .paused)
            #expect(try await Self.sluice(["show", ids[0]], url).stdout.contains("state"))
            let resumed = try await Self.sluice(["resume", ids[0]], url)
            #expect(resumed.status == 0 && resumed.stdout.hasPrefix(ids[0]), "\(resumed.stderr)")
            let paused = try await Self.sluice(["pause", ids[0]], url)
            #expect(paused.status == 0 && paused.stdout == "\(ids[0]) paused\n", "\(paused.stdout) \(paused.stderr)")
            #expect(try await Self.sluice(["rm", ids[0]], url).status == 0)
            // The service's own message, on standard error, exit 1.
            let gone = try await Self.sluice(["show", ids[0]], url)
            #expect(gone.status == 1)
            #expect(gone.stderr.contains("no job") && gone.stdout.isEmpty, "\(gone.stderr)")
            let queue = try await Self.sluice(["queue", "--max-active", "5", "--json"], url)
            #expect(queue.stdout.contains(#""maxActive":5"#), "\(queue.stdout)")
        }
    }

    @Test func waitExitsZeroWhenEveryJobCompletedAndEightWhenOneFailed() async throws {
        try await Self.withService { url in
            let auth = "Authorization: Bearer \(Self.token)"
            let good = try await Self.sluice(["add", "\(url)/testdata/64K", "-H", auth], url).stdout.trimmingCharacters(
                in: .whitespacesAndNewlines)
            let waited = try await Self.sluice(["wait", good], url)
            #expect(waited.status == 0, "\(waited.stderr)")
            #expect(waited.stdout.hasPrefix("\(good) completed"))
            let bad = try await Self.sluice(["add", "\(url)/testdata/1K?status=404", "-H", auth], url).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let failed = try await Self.sluice(["wait", good, bad], url)
            #expect(failed.status == 8, "\(failed.stdout) \(failed.stderr)")
            #expect(failed.stderr.contains("job \(bad) failed: the server answered HTTP 404 (http_status)"), "\(failed.stderr)")
            // A mistyped id is the service's error (1), not a failed job.
            let unknown = try await Self.sluice(["wait", "no-such-job"], url)
            #expect(unknown.status == 1 && unknown.stderr.contains("no job"), "\(unknown.stderr)")
            // add --wait waits too.
            let both = try await Self.sluice(["add", "\(url)/testdata/8K", "-H", auth, "--wait"], url)
            #expect(both.status == 0, "\(both.stderr)")
            // --checksum in any of the four algorithms: a wrong MD5 fails the job (8).
            let md5 = try await Self.sluice(
                ["add", "\(url)/testdata/8K", "-H", auth, "--checksum", "md5=" + String(repeating: "0", count: 32), "--wait"], url)
            #expect(md5.status == 8 && md5.stderr.contains("(checksum_mismatch)"), "\(md5.stdout) \(md5.stderr)")
            let refused = try await Self.sluice(["add", "\(url)/testdata/8K", "--checksum", "crc32=00"], url)
            #expect(refused.status != 0 && refused.stderr.contains("ALGO one of sha-256, sha-512, sha-1, md5"), "\(refused.stderr)")
        }
    }

    @Test func theTokenComesFromAFileOrTheEnvironment() async throws {
        try await Self.withService { url in
            try await withTemporaryDirectory { directory in
                let file = directory.path + "/token"
                try Data("  \(Self.token)\n".utf8).write(to: URL(fileURLWithPath: file))
                // The file wins over the environment, trimmed.
                let fromFile = try await Self.sluice(["ls", "--token-file", file], url, environment: ["SLUICE_TOKEN": "wrong"])
                #expect(fromFile.status == 0, "\(fromFile.stderr)")
                let wrong = try await Self.sluice(["ls"], url, environment: ["SLUICE_TOKEN": "wrong"])
                #expect(wrong.status == 1 && wrong.stderr.contains("401"), "\(wrong.stderr)")
                // An empty SLUICE_TOKEN is no token.
                let empty = try await Self.sluice(["ls"], url, environment: ["SLUICE_TOKEN": ""])
                #expect(empty.status == 1 && empty.stderr.contains("token"), "\(empty.stderr)")
            }
        }
    }

    /// `sluice ls --json | head -c 1`: a reader that goes ends the command as SIGPIPE ends a
    /// C tool. Foundation's write trapped on EPIPE ("Fatal error", a backtrace).
    @Test func aReaderThatGoesEndsTheCommandQuietly() async throws {
        try await Self.withService { url in
            // More than a pipe holds (64 KiB): the write meets the closed pipe.
            let urls = (0..<200).map { "\(url)/testdata/\($0 + 1)K" }
            #expect(try await Self.sluice(["add", "--paused"] + urls, url).status == 0)
            let command = "\(ChildProcess.sluiceExecutable) ls --json --limit 200 --server \(url) | head -c 1 >/dev/null"
            let (status, _, stderr) = try await Task.detached {
                try Spawned.run("/bin/bash", ["-c", "set -o pipefail; " + command], environment: ["SLUICE_TOKEN": Self.token])
            }.value
            let errors = String(decoding: stderr, as: UTF8.self)
            #expect(!errors.contains("Fatal error") && !errors.contains("crashed"), "\(errors)")
            #expect(status == 0 || status == 141, "\(status)")
        }
    }

    /// Off a terminal, `watch` prints a line per job as it appears and as its state changes,
    /// and one when it goes; with --json, each event's JSON.
    @Test func watchPrintsALinePerChangeOffATerminal() async throws {
        try await Self.withService { url in
            let watch = try ChildProcess(arguments: ["watch", "--server", url], environment: ["SLUICE_TOKEN": Self.token])
            let json = try ChildProcess(arguments: ["watch", "--json", "--server", url], environment: ["SLUICE_TOKEN": Self.token])
            let auth = "Authorization: Bearer \(Self.token)"
            // The first job is made once both streams are open: its creation is then an event,
            // not part of a snapshot, and a second one proves the streams are live.
            _ = try await Self.sluice(["add", "\(url)/testdata/1K", "-H", auth, "--paused"], url)
            _ = try await watch.waitForLine(containing: " paused ")
            _ = try await json.waitForLine(containing: "\"state\":\"paused\"")
            let added = try await Self.sluice(["add", "\(url)/testdata/64K", "-o", "watched.bin", "-H", auth], url)
            let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let completed = try await watch.waitForLine(containing: "completed")
            #expect(completed.hasPrefix(id) && completed.contains("watched.bin"), "\(completed)")
            let decoded = try await json.waitForLine(containing: "\"completed\"")
            let job = try Self.decoder.decode(JobSnapshot.self, from: Data(decoded.utf8))
            #expect(job.id == id && job.state == .completed)
            #expect(try await Self.sluice(["rm", id], url).status == 0)
            _ = try await watch.waitForLine(containing: "\(id) removed")
            for process in [watch, json] {
                process.signal(SIGINT)
                _ = try await process.finish(timeout: .seconds(10))
            }
        }
    }

    @Test func anUnreachableServiceIsOneLineNamingItsHostAndPort() async throws {
        let run = try await Self.sluice(["ls"], "http://127.0.0.1:1")
        #expect(run.status == 3)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count <= 2 && run.stderr.contains("127.0.0.1:1"), "\(run.stderr)")
    }
}
