import ArgumentParser
import Foundation
import SluiceCore

/// `sluice watch`: the jobs live, from the event stream. On a terminal, a bar per running
/// job, redrawn at most four times a second; otherwise a line per change.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Watch jobs live (Ctrl-C to stop).")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let terminal = isatty(STDOUT_FILENO) == 1 && !options.json
        try await withService(options) { client in
            var jobs: [String: JobSnapshot] = [:]
            var event = ""
            var drawn = ContinuousClock.now - .seconds(1)
            for try await line in try await client.lines("/events") {
                if line.hasPrefix("event:") {
                    event = line.dropFirst(6).trimmingCharacters(in: .whitespaces)
                    continue
                }
                guard line.hasPrefix("data:") else { continue }
                let data = Data(line.dropFirst(5).trimmingCharacters(in: .whitespaces).utf8)
                if options.json {
                    printJSON(data)
                    continue
                }
                switch event {
                case "job":
                    guard let job = try? ServiceClient.job(data) else { continue }
                    let before = jobs[job.id]
                    jobs[job.id] = job
                    if !terminal, before?.state != job.state || before == nil {
                        printLine(JobTable.row(job).joined(separator: " "))
                    }
                case "removed":
                    let id = (try? JSONDecoder().decode(JSONValue.self, from: data))?["id"]?.stringValue
                    if let id, jobs.removeValue(forKey: id) != nil, !terminal { printLine("\(id) removed") }
                case "reset": jobs = [:]
                default: continue
                }
                if terminal, ContinuousClock.now - drawn > .milliseconds(250) {
                    drawn = .now
                    Self.draw(jobs.values.sorted { $0.createdAt < $1.createdAt })
                }
            }
        }
    }

    /// The running jobs with a bar each, and counts of the others, drawn over the last frame.
    static func draw(_ jobs: [JobSnapshot]) {
        var lines: [String] = []
        let running = jobs.filter { $0.state == .running }
        for job in running.prefix(20) {
            // The service's numbers, whatever they are: a bar of 0 to 30 cells.
            let fraction = min(1, max(0, job.progress.flatMap { $0.isFinite ? $0 : nil } ?? 0))
            let filled = Int((fraction * 30).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 30 - filled)
            let cells = JobTable.row(job)
            lines.append("\(cells[0].prefix(8)) [\(bar)] \(cells[4]) \(cells[5]) eta \(cells[6]) \(cells[2]) from \(cells[3])")
        }
        var counts: [String: Int] = [:]
        for job in jobs { counts[job.state.rawValue, default: 0] += 1 }
        lines.append(JobState.allCases.map { "\($0.rawValue) \(counts[$0.rawValue] ?? 0)" }.joined(separator: "  "))
        // Home, clear to the end, then the frame.
        writeAll(STDOUT_FILENO, "\u{1B}[H\u{1B}[J" + lines.joined(separator: "\n") + "\n")
    }
}
