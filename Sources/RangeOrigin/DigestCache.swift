import NIOPosix
import SluiceSystem
import Synchronization

/// Digests of representations, computed once and remembered, for `Repr-Digest`
/// (RFC 9530). Hashing a file reads all of it, so:
/// - **In the background.** A request never waits for a digest: one nobody has yet is
///   started by the first request that wants it, which is answered without the field, and
///   answers after the computation carry it. (Waiting, even for a bounded time, made
///   clients' read timeouts trip on a busy machine: the field is optional, the bytes are
///   not.)
/// - **Once.** Requests that come while a computation runs start no other. A computation
///   that fails (the file changed under it) is not remembered, and a later request tries
///   again.
/// - **Off the event loop and the cooperative pool**, on a thread of its own at the lowest
///   priority, so that it takes no time slice from the downloads or the API.
/// - **Bounded.** At most `capacity` digests are kept (the least recently used goes), and at
///   most `maximumRunning` are computed at once; past that a request starts none.
final class DigestCache<Key: Hashable & Sendable>: Sendable {
    typealias Digest = [UInt8]

    private struct State {
        var done: [Key: (digest: Digest, lastUse: UInt64)] = [:]
        var running: Set<Key> = []
        var clock: UInt64 = 0
        var computations = 0
        /// Computations started per key (forgotten past a bound): for tests.
        var started: [Key: Int] = [:]
    }

    let capacity: Int
    let maximumRunning: Int
    private let state = Mutex(State())

    init(capacity: Int = 256, maximumRunning: Int = 4) {
        self.capacity = max(1, capacity)
        self.maximumRunning = max(1, maximumRunning)
    }

    /// How many computations have been started: for tests that a digest is computed once.
    var computations: Int { state.withLock { $0.computations } }

    /// How many computations of `key` have been started.
    func computations(of key: Key) -> Int { state.withLock { $0.started[key] ?? 0 } }

    /// The digest of `key` if it is known now.
    func cached(_ key: Key) -> Digest? {
        state.withLock { state in
            guard let entry = state.done[key] else { return nil }
            state.clock += 1
            state.done[key]!.lastUse = state.clock
            return entry.digest
        }
    }

    /// The digest of `key` if it is known now; if not, nil, and `compute` (blocking; nil when
    /// there is no digest to give) is started unless it runs already or too many do.
    func digest(for key: Key, compute: @escaping @Sendable () throws -> Digest?) -> Digest? {
        if let digest = cached(key) { return digest }
        let starts = state.withLock { state -> Bool in
            guard !state.running.contains(key), state.running.count < maximumRunning else { return false }
            state.running.insert(key)
            state.computations += 1
            if state.started.count >= 4096 { state.started = [:] }
            state.started[key, default: 0] += 1
            return true
        }
        if starts {
            DigestHashingPool.shared.submit { work in
                guard case .active = work else {
                    self.finish(key, digest: nil)
                    return
                }
                ThreadPriority.setCurrentThreadNice(19)
                self.finish(key, digest: try? compute())
            }
        }
        return nil
    }

    /// Remembers the outcome of a computation.
    private func finish(_ key: Key, digest: Digest?) {
        state.withLock { state in
            state.running.remove(key)
            guard let digest else { return }
            state.clock += 1
            if state.done.count >= capacity, let oldest = state.done.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.done.removeValue(forKey: oldest)
            }
            state.done[key] = (digest, state.clock)
        }
    }
}

/// The hashing thread, started when first used and shared by every origin in the process.
enum DigestHashingPool {
    static let shared: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()
}
