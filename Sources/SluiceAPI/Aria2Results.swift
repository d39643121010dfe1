import Aria2RPC
import SluiceCore
import Synchronization

/// The results aria2 keeps for downloads removed through RPC (`status: removed` in
/// `tellStopped`) until `removeDownloadResult` or `purgeDownloadResult`: the job itself is
/// gone, as `DELETE /jobs/ID` leaves it. At most 1,000, the oldest dropped first (aria2's
/// `--max-download-result`). Kept in memory: a restart forgets them, as aria2 does.
final class Aria2Results: Sendable {
    static let limit = 1000
    private let removed = Mutex<[JobSnapshot]>([])

    func keep(_ job: JobSnapshot) {
        removed.withLock { list in
            list.removeAll { $0.id == job.id }
            list.append(job)
            if list.count > Self.limit { list.removeFirst(list.count - Self.limit) }
        }
    }

    var all: [JobSnapshot] { removed.withLock { $0 } }

    /// Forgets one result; whether it was kept.
    func forget(id: String) -> Bool {
        removed.withLock { list in
            let before = list.count
            list.removeAll { $0.id == id }
            return list.count < before
        }
    }

    func forgetAll() { removed.withLock { $0 = [] } }
}
