#if canImport(Glibc)
import Glibc
#endif
import Crypto
import Foundation
import HTTPTypes
import SluiceCore
import SluiceTestSupport
import Testing

@Suite struct GetCommandTests {
    static func sha256(_ path: String) throws -> String {
        SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
    }

    static func expected(size: Int64, seed: UInt64 = 0) -> String {
        SHA256.hash(data: TestDataContent(seed: seed).bytes(0..<size)).map { String(format: "%02x", $0) }.joined()
    }

    @Test func downloadsAndPrintsOneSummaryLineWhenNotATerminal() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let file = directory.path + "/out.bin"
                let run = try ChildProcess(arguments: ["get", "http://127.0.0.1:\(port)/testdata/2M?seed=7", "-o", file, "-x3"])
                let (status, _, stderr) = try await run.finish()
                #expect(status == 0)
                #expect(try Self.sha256(file) == Self.expected(size: 2 << 20, seed: 7))
                #expect(stderr.split(separator: "\n").count == 1)
                #expect(stderr.contains("saved \(file)"))
                #expect(!FileManager.default.fileExists(atPath: file + ".sluice"))
            }
        }
    }

    /// curl's names: `-H` (repeatable), `-A`, `--limit-rate`.
    @Test func sendsHeadersAndUserAgentAndKeepsToTheRate() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path, recorder: recorder) { port in
                let file = directory.path + "/rated.bin"
                let started = ContinuousClock.now
                let run = try ChildProcess(arguments: [
                    "get", "http://127.0.0.1:\(port)/testdata/256K", "-o", file, "-x2", "-H", "Cookie: session=abc",
                    "-H", "X-Api-Key:  k1 ", "-A", "Mozilla/5.0 (test)", "--limit-rate", "64K",
                ])
                let (status, _, stderr) = try await run.finish()
                let elapsed = ContinuousClock.now - started
                #expect(status == 0, "\(stderr)")
                #expect(try Self.sha256(file) == Self.expected(size: 256 << 10))
                let requests = recorder.all.filter { $0.path.hasPrefix("/testdata/") }
                #expect(!requests.isEmpty)
                for request in requests {
                    #expect(request.headers[HTTPField.Name("Cookie")!] == "session=abc")
                    #expect(request.headers[HTTPField.Name("X-Api-Key")!] == "k1")
                    #expect(request.headers[.userAgent] == "Mozilla/5.0 (test)")
                }
                // 256 KiB at 64 KiB/s is 4 s; a first burst may come at once.
                #expect(elapsed >= .seconds(2), "took \(elapsed)")
            }
        }
        // A -H that is not `Name: value`, a header Sluice sets itself, a rate of nothing.
        for arguments in [["-H", "NoColon"], ["-H", "Host: elsewhere"], ["--limit-rate", "0"], ["--limit-rate", "fast"]] {
            let run = try ChildProcess(arguments: ["get", "http://127.0.0.1:1/x"] + arguments)
            let (status, _, stderr) = try await run.finish()
            #expect(status == 64, "\(arguments): \(stderr)")
        }
    }

    @Test func exitCodesSayWhatWentWrong() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let base = "http://127.0.0.1:\(port)"
                let cases: [([String], Int32)] = [
                    (["get", "\(base)/files/missing", "-o", directory.path + "/a"], 4),
                    (["get", "\(base)/testdata/1K", "-o", directory.path + "/b", "--sha256", String(repeating: "ab", count: 32)], 5),
                    (["get", "ftp://example.com/x"], 64),
                    (["get", "\(base)/testdata/1K", "-x", "17"], 64),
                    (["get", "http://127.0.0.1:1/unreachable", "-o", directory.path + "/c"], 3),
                ]
                for (arguments, code) in cases {
                    let run = try ChildProcess(arguments: arguments + ["--retry-wait", "0.01"])
                    let (status, _, stderr) = try await run.finish()
                    #expect(status == code, "\(arguments): \(stderr)")
                }
            }
        }
    }

    @Test func continuesAfterKill9FromTheCheckpoint() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path, recorder: recorder) { port in
                let url = "http://127.0.0.1:\(port)/testdata/24M?rate=4M&seed=2"
                let file = directory.path + "/big.bin"
                let first = try ChildProcess(arguments: ["get", url, "-o", file, "-x", "2"])
                // Wait for a checkpoint that claims some bytes, then crash the process.
                let checkpoints = "\(file).sluice"
                let deadline = ContinuousClock.now + .seconds(30)
                var saved: DownloadCheckpoint?
                while ContinuousClock.now < deadline {
                    if let data = FileManager.default.contents(atPath: checkpoints),
                        let checkpoint = try? JSONDecoder().decode(DownloadCheckpoint.self, from: data),
                        checkpoint.writtenBytes > 0
                    {
                        saved = checkpoint
                        break
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                first.signal(SIGKILL)
                _ = try await first.finish()
                let checkpoint = try #require(saved)
                let before = recorder.all.count
                let second = try ChildProcess(arguments: ["get", url, "-o", file, "-x", "2", "-c"])
                let (status, _, stderr) = try await second.finish()
                #expect(status == 0, "\(stderr)")
                #expect(try Self.sha256(file) == Self.expected(size: 24 << 20, seed: 2))
                // The second run never asked again for bytes the checkpoint had.
                for entry in recorder.all.dropFirst(before) {
                    let range = try #require(entry.range.flatMap { RangeHeader.parse($0) }?.first)
                    guard case .fromTo(let first, let last) = range else {
                        Issue.record("unexpected range")
                        continue
                    }
                    let asked = first..<((last ?? (24 << 20) - 1) + 1)
                    #expect(checkpoint.writtenRanges.allSatisfy { !$0.overlaps(asked) })
                }
            }
        }
    }

    /// Issue 10: a partial file with no checkpoint (left by curl, wget or a browser) is
    /// continued from its size, as `curl -C -` and `wget -c` do.
    @Test func continuesAPartialFileLeftByAnotherProgram() async throws {
        let recorder = RequestRecorder()
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path, recorder: recorder) { port in
                let size: Int64 = 8 << 20
                let kept: Int64 = 3 << 20
                let file = directory.path + "/other.bin"
                try Data(TestDataContent(seed: 6).bytes(0..<kept)).write(to: URL(fileURLWithPath: file))
                let url = "http://127.0.0.1:\(port)/testdata/8M?seed=6"
                let run = try ChildProcess(arguments: ["get", url, "-o", file, "-x", "4", "-c"])
                let (status, _, stderr) = try await run.finish()
                #expect(status == 0, "\(stderr)")
                #expect(stderr.contains("continuing from"))
                #expect(try Self.sha256(file) == Self.expected(size: size, seed: 6))
                // The first request asked for the rest, and nothing before it was fetched.
                #expect(recorder.all.first?.range == "bytes=\(kept)-")
                #expect(recorder.all.first?.ifRange == nil)
                for entry in recorder.all {
                    let range = try #require(entry.range.flatMap { RangeHeader.parse($0) }?.first)
                    guard case .fromTo(let first, _) = range else {
                        Issue.record("unexpected range")
                        continue
                    }
                    #expect(first >= kept, "asked again for bytes the file had: \(entry.range ?? "")")
                }

                // A file that is already whole: 416, nothing downloaded, verified all the same.
                let before = recorder.bytesSent()
                let again = try ChildProcess(arguments: ["get", url, "-o", file, "-c", "--sha256", Self.expected(size: size, seed: 6)])
                #expect(try await again.finish().status == 0)
                #expect(recorder.bytesSent() == before)

                // A server that ignores ranges sends the whole file: start over, as today.
                let other = directory.path + "/norange.bin"
                try Data(repeating: 0xEE, count: 1000).write(to: URL(fileURLWithPath: other))
                let norange = "http://127.0.0.1:\(port)/testdata/1M?seed=6&norange=1"
                let whole = try ChildProcess(arguments: ["get", norange, "-o", other, "-c"])
                #expect(try await whole.finish().status == 0)
                #expect(try Self.sha256(other) == Self.expected(size: 1 << 20, seed: 6))
            }
        }
    }

    /// `-c` never destroys the file it was asked to continue: a server that refuses (an
    /// expired signed URL, say) leaves it as it was.
    @Test func continuingAgainstARefusingServerKeepsTheFile() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                let file = directory.path + "/keep.bin"
                let kept = Data(TestDataContent(seed: 9).bytes(0..<100_000))
                try kept.write(to: URL(fileURLWithPath: file))
                let run = try ChildProcess(arguments: ["get", "http://127.0.0.1:\(port)/files/gone.bin", "-o", file, "-c"])
                let (status, _, _) = try await run.finish()
                #expect(status == 4)
                #expect(FileManager.default.contents(atPath: file) == kept)
            }
        }
    }

    @Test func interruptLeavesAResumablePartial() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin(root: directory.path) { port in
                // About 4 s over the default connections: its first checkpoint (2 s) lands well
                // before the end.
                let url = "http://127.0.0.1:\(port)/testdata/16M?rate=1M"
                let file = directory.path + "/int.bin"
                let run = try ChildProcess(arguments: ["get", url, "-o", file])
                let deadline = ContinuousClock.now + .seconds(30)
                // Interrupted once its control file exists and bytes have arrived (not after a
                // fixed time): there is a partial to resume.
                func arrived() -> Int64 {
                    guard (try? FileManager.default.attributesOfItem(atPath: file + ".sluice")) != nil else { return 0 }
                    let text = (try? String(contentsOfFile: file + ".sluice", encoding: .utf8)) ?? ""
                    return text.contains("\"written\":[]") || !text.contains("\"written\"") ? 0 : 1
                }
                while ContinuousClock.now < deadline, arrived() == 0 {
                    try await Task.sleep(for: .milliseconds(50))
                }
                run.signal(SIGINT)
                let (status, _, stderr) = try await run.finish()
                #expect(status == 130)
                #expect(stderr.contains("-c"))
                let data = try #require(FileManager.default.contents(atPath: file + ".sluice"))
                let checkpoint = try JSONDecoder().decode(DownloadCheckpoint.self, from: data)
                #expect(checkpoint.writtenBytes > 0)
                #expect(checkpoint.isResumable)
            }
        }
    }
}
