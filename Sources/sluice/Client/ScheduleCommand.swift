import ArgumentParser
import Foundation
import NIOHTTP1
import SluiceCore

/// `sluice schedule`: the schedule's rules, what they set now and when that changes; with
/// `--set FILE` (or `-` for standard input) or `--timetable`, replaces it first.
struct ScheduleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule", abstract: "Show the schedule, or set it from a JSON file or an rclone timetable.")
    @Option(name: .customLong("set"), help: "A schedule as PUT /schedule takes it (JSON); - reads standard input.")
    var file: String?
    @Option(help: "rclone's --bwlimit timetable, such as 'Mon-08:00,512K Sat-00:00,off'.")
    var timetable: String?
    @Option(help: "The timetable's IANA time zone (with --timetable), such as Europe/Berlin.")
    var timeZone: String?
    @Flag(help: "Remove every rule.") var clear = false
    @OptionGroup var options: ClientOptions

    func validate() throws {
        if [file != nil, timetable != nil, clear].filter({ $0 }).count > 1 {
            throw ValidationError("--set, --timetable or --clear, one of them")
        }
        if timeZone != nil, timetable == nil { throw ValidationError("--time-zone goes with --timetable") }
    }

    func body() throws -> JSONValue? {
        if clear { return .object([("rules", .array([]))]) }
        if let timetable {
            return .object([("timeZone", .string(timeZone ?? TimeZone.current.identifier)), ("timetable", .string(timetable))])
        }
        guard let file else { return nil }
        let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
        guard let data, let json = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw ValidationError("--set: \(file) is not readable JSON")
        }
        return json
    }

    func run() async throws {
        let body = try body()
        try await withService(options) { client in
            let data: Data
            if let body {
                data = try await client.send(.PUT, "/schedule", body: body)
            } else {
                data = try await client.send(.GET, "/schedule")
            }
            guard !options.json, let json = try? JSONDecoder().decode(JSONValue.self, from: data) else {
                printJSON(data)
                return
            }
            for line in Self.lines(json) { printLine(TerminalText.safe(line)) }
        }
    }

    /// The rules one a line, then what is in effect and until when.
    static func lines(_ json: JSONValue) -> [String] {
        var lines = ["time zone: \(json["timeZone"]?.stringValue ?? "UTC")"]
        if let timetable = json["timetable"]?.stringValue { lines.append("timetable: \(timetable)") }
        if case .array(let rules)? = json["rules"], json["timetable"] == nil {
            for (index, rule) in rules.enumerated() {
                let days: String
                switch rule["days"] {
                case .string(let text)?: days = text
                case .array(let names)?: days = names.compactMap(\.stringValue).joined(separator: ",")
                default: days = "*"
                }
                var sets: [String] = []
                if let rate = rule["limitRate"] { sets.append("limitRate \(rate.text == "null" ? "unlimited" : rate.text)") }
                if let count = rule["maxActive"] { sets.append("maxActive \(count.text)") }
                if let run = rule["run"] { sets.append(run.text == "false" ? "closed" : "open") }
                lines.append(
                    "rules[\(index)]: \(days) \(rule["from"]?.stringValue ?? "?")-\(rule["to"]?.stringValue ?? "?") \(sets.joined(separator: ", "))"
                )
            }
            if rules.isEmpty { lines.append("no rules: the queue's own settings apply") }
        }
        if let effect = json["inEffect"] {
            let rate = effect["limitRate"].map { $0.text == "null" ? "unlimited" : $0.text } ?? "?"
            lines.append(
                "now: maxActive \(effect["maxActive"]?.text ?? "?"), limitRate \(rate), \(effect["run"]?.text == "false" ? "window closed" : "running")"
            )
            lines.append("next change: \(effect["next"]?.stringValue ?? "none")")
        }
        return lines
    }
}
