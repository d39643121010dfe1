import Foundation
import SluiceCore

/// Jobs as `sluice ls` prints them: full ids and names, columns as wide as their widest
/// cell, so that a script may still split on spaces.
enum JobTable {
    static let header = ["ID", "STATE", "NAME", "HOST", "PROGRESS", "SPEED", "ETA"]

    /// The job's name as the dashboard shows it: its file's name, else the last segment of
    /// its URL's path (decoded), else the URL.
    static func name(_ job: JobSnapshot) -> String {
        if let filename = job.filename { return filename }
        let path = URLComponents(string: job.url)?.percentEncodedPath ?? ""
        if let segment = path.split(separator: "/").last, let decoded = String(segment).removingPercentEncoding, !decoded.isEmpty {
            return decoded
        }
        return URLCredentials.redacted(job.url)
    }

    /// The host (and port, when given) the job downloads from, without credentials.
    static func host(_ job: JobSnapshot) -> String {
        guard let components = URLComponents(string: job.url), let host = components.host else { return "-" }
        let shown = host.contains(":") ? "[\(host)]" : host
        return components.port.map { "\(shown):\($0)" } ?? shown
    }

    static func row(_ job: JobSnapshot) -> [String] {
        let progress: String
        if let fraction = job.progress {
            progress = String(format: "%.1f%%", (fraction * 1000).rounded(.down) / 10)
        } else {
            progress = ByteSize.human(job.bytesDone)
        }
        let running = job.state == .running
        // Each cell escaped on its own (`TerminalText`): a name with a line break cannot
        // start a row of its own, nor one with an escape sequence rewrite the screen. No
        // speed until one is measured: a job that just started is not "0 B/s".
        // A queued job something holds back says what (`waiting:startAt`), in one word.
        return [
            job.id, job.heldBy.map { "waiting:\($0.rawValue)" } ?? job.state.rawValue, name(job), host(job), progress,
            running && job.speed >= 1 ? ByteSize.human(Int64(min(job.speed, 1e18))) + "/s" : "-",
            running ? job.eta.map(duration) ?? "-" : "-",
        ].map { TerminalText.safe($0) }
    }

    static func render(_ jobs: [JobSnapshot]) -> String {
        let rows = [header] + jobs.map(row)
        var widths = Array(repeating: 0, count: header.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `1h02m`, `3m05s`, `42s`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        let whole = Int(min(seconds, 359_999).rounded(.up))
        if whole >= 3600 { return String(format: "%dh%02dm", whole / 3600, whole / 60 % 60) }
        if whole >= 60 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return "\(whole)s"
    }
}
