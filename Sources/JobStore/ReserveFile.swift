import SluiceSystem
import Foundation
import Synchronization

/// A few MiB of disk held beside the job store and given up when the disk is full, so the
/// store can still record what happened (a job that failed because downloads filled the
/// disk), instead of losing the change and restarting the job at the next start. Refilled
/// once space is back, at most every `interval`.
final class ReserveFile: Sendable {
    let path: String
    let size: Int64
    let interval: Duration
    private let lastAttempt = Mutex<ContinuousClock.Instant?>(nil)

    init(path: String, size: Int64 = 4 << 20, interval: Duration = .seconds(30)) {
        self.path = path
        self.size = size
        self.interval = interval
    }

    /// Gives the space back; false when there was none held.
    func release() -> Bool {
        lastAttempt.withLock { $0 = ContinuousClock.now }
        return unlink(path) == 0
    }

    /// Holds the space again if it is missing and the last try was long enough ago.
    func refillIfDue() {
        let now = ContinuousClock.now
        let due = lastAttempt.withLock { last -> Bool in
            if let last, now - last < interval { return false }
            last = now
            return true
        }
        guard due, access(path, F_OK) != 0 else { return }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        #if canImport(Glibc)
        if posix_fallocate(descriptor, 0, off_t(size)) != 0 { unlink(path) }
        #endif
    }
}
