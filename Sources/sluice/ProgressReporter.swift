import SluiceSystem
import Foundation
import SluiceCore
import Synchronization

/// A one-line progress bar on a terminal (bytes, percent, speed, ETA); silent otherwise.
final class ProgressReporter: Sendable {
    private let isTerminal: Bool
    private let enabled: Bool
    private let drawn = Mutex(false)

    init(enabled: Bool) {
        self.enabled = enabled
        self.isTerminal = isatty(STDERR_FILENO) == 1
    }

    func show(_ progress: DownloadProgress) {
        guard enabled, isTerminal else { return }
        drawn.withLock { $0 = true }
        writeAll(STDERR_FILENO, "\r" + Self.line(progress) + "\u{1B}[K")
    }

    /// A line of its own (a retry and its reason), on a terminal or a pipe alike: over the
    /// bar, which the next progress draws again.
    func say(_ line: String) {
        guard enabled else { return }
        if isTerminal, drawn.withLock({ $0 }) { writeAll(STDERR_FILENO, "\r\u{1B}[K") }
        printError(line)
    }

    /// Ends the bar's line so that what follows starts on a fresh one.
    func finish() {
        if drawn.withLock({ $0 }) { writeAll(STDERR_FILENO, "\n") }
    }

    static func line(_ progress: DownloadProgress) -> String {
        let done = ByteSize.human(progress.bytesDone)
        let speed = ByteSize.human(Int64(progress.speed)) + "/s"
        guard let fraction = progress.fraction, let total = progress.bytesTotal else {
            return "\(done)  \(speed)  \(progress.phase.rawValue)"
        }
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar =
            String(repeating: "=", count: filled) + (filled < width ? ">" : "")
            + String(repeating: " ", count: max(0, width - filled - 1))
        let percent = String(format: "%5.1f%%", fraction * 100)
        let eta = progress.eta.map { "ETA " + duration($0) } ?? "ETA --"
        return "\(percent) [\(bar)] \(done) / \(ByteSize.human(total))  \(speed)  \(eta)  x\(progress.activeConnections)"
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 3600 { return "\(whole / 3600)h\(whole % 3600 / 60)m" }
        if whole >= 60 { return "\(whole / 60)m\(whole % 60)s" }
        return "\(whole)s"
    }
}
