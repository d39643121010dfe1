import ArgumentParser
import Foundation
import NIOHTTP1
import SluiceCore

/// `sluice wait ID...`: blocks until each job has ended. Exit 0 when every one completed;
/// 8 when one failed (its error printed) or was deleted first; 1 or 3 as every command.
struct Wait: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Wait until jobs end.",
        discussion: "Exit codes: 0 every job completed, 8 one failed or was deleted, 1 the service refused, 3 unreachable."
    )
    @Argument(help: "Job ids.") var ids: [String]
    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await withService(options) { client in
            try await Self.waitFor(ids, client: client, json: options.json, quiet: false)
        }
    }

    /// Polls each job twice a second until it has ended; prints each as it ends.
    static func waitFor(_ ids: [String], client: ServiceClient, json: Bool, quiet: Bool) async throws {
        var failed: [String] = []
        for id in ids {
            var seen = false
            while true {
                let (status, data) = try await client.exchange(.GET, "/jobs/" + Show.escaped(id))
                // A job that never was (a mistyped id) is the service's error; one seen and
                // then gone was deleted before it ended.
                if status == 404, seen {
                    failed.append("job \(id) was deleted before it completed")
                    break
                }
                guard (200..<300).contains(status) else { throw ServiceClient.failure(status: status, body: data) }
                seen = true
                let job = try ServiceClient.job(data)
                if job.state == .completed || job.state == .failed {
                    if json {
                        printJSON(data)
                    } else if !quiet {
                        printLine("\(job.id) \(job.state.rawValue)" + (job.path.map { " \($0)" } ?? ""))
                    }
                    if job.state == .failed {
                        failed.append(
                            TerminalText.safe(
                                "job \(id) failed: \(job.error?.message ?? "no reason given") (\(job.error?.code ?? "unknown"))"))
                    }
                    break
                }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
        if !failed.isEmpty {
            for line in failed { printError("sluice: \(line)") }
            throw ExitCode(ServiceClient.Exit.jobFailed)
        }
    }
}

/// `sluice queue`: the queue's settings and counts; changes them with the flags.
struct Queue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the queue, or pause, resume and tune it.")
    @Flag(help: "Start no more jobs (running ones go on).") var pause = false
    @Flag(help: "Start jobs again.") var resume = false
    @Option(help: "Jobs running at once, 1-64.") var maxActive: Int?
    @Option(help: "Every download's total rate, K/M/G suffixes allowed; 0 for none.") var limitRate: String?
    @OptionGroup var options: ClientOptions

    func validate() throws {
        if pause && resume { throw ValidationError("--pause or --resume, not both") }
        if let limitRate, limitRate != "0", ByteSize.parse(limitRate, limit: RateLimit.maximum) == nil {
            throw ValidationError("--limit-rate must be a byte count (like 5M) or 0, not \(limitRate)")
        }
    }

    func run() async throws {
        var patch: [(String, JSONValue)] = []
        if pause || resume { patch.append(("paused", .bool(pause))) }
        if let maxActive { patch.append(("maxActive", JSONValue(maxActive))) }
        if let limitRate {
            patch.append(("limitRate", limitRate == "0" ? .null : JSONValue(ByteSize.parse(limitRate, limit: RateLimit.maximum))))
        }
        try await withService(options) { client in
            let data = try await (patch.isEmpty ? client.send(.GET, "/queue") : client.send(.PATCH, "/queue", body: .object(patch)))
            guard !options.json, case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
                printJSON(data)
                return
            }
            for (name, value) in fields { printLine(TerminalText.safe("\(name): \(value.stringValue ?? value.text)")) }
        }
    }
}
