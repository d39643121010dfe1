import ArgumentParser
import Foundation
import NIOHTTP1
import SluiceCore

/// `sluice add URL...`: one job per URL; prints each new job's id on a line.
struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add downloads to a running service; prints their ids.")

    @Argument(help: "http or https URLs.")
    var urls: [String]
    @Option(name: .shortAndLong, help: "The file name (one URL only).")
    var output: String?
    @Option(name: [.customShort("x", allowingJoined: true), .customLong("connections")], help: "Range connections, 1-16.")
    var connections: Int?
    @Option(help: "The expected SHA-256 (hex) of the file (one URL only).")
    var sha256: String?
    @Option(help: "The expected digest, ALGO=HEX: sha-256, sha-512, sha-1 or md5 (one URL only).")
    var checksum: String?
    @Option(help: "Start only once this job has completed (repeatable).")
    var after: [String] = []
    @Option(help: "Higher starts first (-1000...1000).")
    var priority: Int?
    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value' (repeatable).")
    var header: [String] = []
    @Flag(help: "Add them paused.")
    var paused = false
    @Option(help: "Start them no earlier than this RFC 3339 instant, such as 2026-12-01T02:00:00+01:00.")
    var startAt: String?
    @Flag(help: "Let them run while the schedule's window is closed.")
    var ignoreSchedule = false
    @Flag(help: "Wait until each has ended, as `sluice wait` does.")
    var wait = false
    @OptionGroup var options: ClientOptions

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        if let startAt, RFC3339.date(startAt) == nil {
            throw ValidationError("--start-at must be an RFC 3339 date and time, such as 2026-12-01T02:00:00+01:00, not \(startAt)")
        }
        if urls.count > 1, output != nil || sha256 != nil || checksum != nil {
            throw ValidationError("-o, --sha256 and --checksum name one file: give one URL")
        }
        if let checksum {
            guard sha256 == nil else { throw ValidationError("give --checksum or --sha256, not both") }
            do {
                _ = try Checksum(parsing: checksum, field: "--checksum")
            } catch let error as SluiceError {
                throw ValidationError(error.message)
            }
        }
    }

    func run() async throws {
        let headers = try HeaderLines.parse(header).sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }
        try await withService(options) { client in
            var made: [JobSnapshot] = []
            let bodies: [JSONValue] = urls.map { url in
                var fields: [(String, JSONValue)] = [("url", .string(url))]
                if let output { fields.append(("filename", .string(output))) }
                if let connections { fields.append(("connections", JSONValue(connections))) }
                if let sha256 { fields.append(("sha256", .string(sha256))) }
                if let checksum { fields.append(("checksum", .string(checksum))) }
                if !after.isEmpty { fields.append(("after", .array(after.map(JSONValue.string)))) }
                if let priority { fields.append(("priority", JSONValue(priority))) }
                if !headers.isEmpty { fields.append(("headers", .object(headers))) }
                if paused { fields.append(("paused", .bool(true))) }
                if let startAt { fields.append(("startAt", .string(startAt))) }
                if ignoreSchedule { fields.append(("ignoreSchedule", .bool(true))) }
                return .object(fields)
            }
            if let body = bodies.first, bodies.count == 1 {
                let data = try await client.send(.POST, "/jobs", body: body)
                let job = try ServiceClient.job(data)
                made.append(job)
                options.json ? printJSON(data) : printLine(job.id)
            } else {
                // Many URLs go in batches (`POST /jobs/batch`) of at most 60 KiB: one refused
                // refuses its batch, and the error names the URL by its place on the command line.
                for batch in CreateJobBatch.batches(of: bodies) {
                    let (status, data) = try await client.exchange(.POST, "/jobs/batch", body: .object([("jobs", .array(batch.bodies))]))
                    // A service from before batches: one request per URL.
                    if status == 404 || status == 405 {
                        for body in batch.bodies {
                            let job = try ServiceClient.job(try await client.send(.POST, "/jobs", body: body))
                            made.append(job)
                            options.json ? printJSON(Data(job.json.text.utf8)) : printLine(job.id)
                        }
                        continue
                    }
                    guard (200..<300).contains(status) else {
                        var failure = ServiceClient.failure(status: status, body: data)
                        failure.message = CreateJobBatch.renumbered(failure.message, first: batch.first)
                        throw failure
                    }
                    for job in try ServiceClient.jobs(data) {
                        made.append(job)
                        options.json ? printJSON(Data(job.json.text.utf8)) : printLine(job.id)
                    }
                }
            }
            if wait { try await Wait.waitFor(made.map(\.id), client: client, json: false, quiet: true) }
        }
    }
}

/// `sluice ls`: the jobs as a table.
struct Ls: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List jobs: id, state, name, progress, speed, ETA.")

    @Option(help: "Only these states, comma-separated (queued,running,paused,completed,failed).")
    var state: String?
    @Option(help: "At most this many, newest first.")
    var limit: Int?
    @OptionGroup var options: ClientOptions

    func run() async throws {
        var query: [String] = []
        if let state { query.append("state=" + state) }
        if let limit { query.append("limit=\(limit)") }
        try await withService(options) { client in
            let data = try await client.send(.GET, "/jobs" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
            options.json ? printJSON(data) : printLine(JobTable.render(try ServiceClient.jobs(data)))
        }
    }
}

/// `sluice show ID`: one job, every field.
struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one job.")

    @Argument(help: "The job's id.")
    var id: String
    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await withService(options) { client in
            let data = try await client.send(.GET, "/jobs/" + Self.escaped(id))
            if options.json {
                printJSON(data)
                return
            }
            // The API's fields, one per line, in its order.
            guard case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: data) else { return }
            let width = fields.map(\.0.count).max() ?? 0
            for (name, value) in fields {
                let text = TerminalText.safe(value.stringValue ?? value.text)
                printLine(TerminalText.safe(name).padding(toLength: width, withPad: " ", startingAt: 0) + "  " + text)
            }
        }
    }

    static func escaped(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? id
    }
}

/// `sluice pause ID...`, `sluice resume ID...`: each job in turn; the first refusal stops.
struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause jobs (their bytes are kept).")
    @Argument(help: "Job ids.") var ids: [String]
    @OptionGroup var options: ClientOptions

    func run() async throws { try await control(ids, "pause", options) }
}

struct Resume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Resume paused jobs, or retry failed ones.")
    @Argument(help: "Job ids.") var ids: [String]
    @OptionGroup var options: ClientOptions

    func run() async throws { try await control(ids, "resume", options) }
}

/// `sluice rm ID... [--files]`: deletes jobs (and with `--files` their finished files).
struct Rm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete jobs: stop them, delete their partial files.")
    @Argument(help: "Job ids.") var ids: [String]
    @Flag(help: "Delete finished files too.") var files = false
    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await withService(options) { client in
            for id in ids {
                _ = try await client.send(.DELETE, "/jobs/" + Show.escaped(id) + (files ? "?deleteFile=true" : ""))
                if !options.json { printLine("deleted \(id)") }
            }
        }
    }
}

extension AsyncParsableCommand {
    func control(_ ids: [String], _ action: String, _ options: ClientOptions) async throws {
        try await withService(options) { client in
            for id in ids {
                let data = try await client.send(.POST, "/jobs/" + Show.escaped(id) + "/" + action)
                if options.json {
                    printJSON(data)
                } else {
                    printLine("\(id) \(try ServiceClient.job(data).state.rawValue)")
                }
            }
        }
    }
}
