import AsyncHTTPClient
import Logging
import NIOCore
import SluiceCore
import NIOHTTP1

extension Download {
    /// Runs one worker per connection until the segment map is complete. Under a per-host
    /// cap, the first worker uses the connection the attempt holds, the others take what
    /// is free, and more join as other downloads give connections back, until the download
    /// has its `connections` or a worker finds nothing left to take.
    func runWorkers(
        file: PartialFile, first: (response: HTTPClientResponse, claim: SegmentMap.Claim)?, workers: Int? = nil
    ) async throws {
        let wanted = workers ?? options.connections
        let cap = options.hostConnections
        let host = HostConnections.key(for: url)
        try await withThrowingTaskGroup(of: WorkerEnd.self) { group in
            var active = 0
            // Connections are spread over the primary and the mirrors that joined, in turn.
            var spawned = 0
            let lanes = state.laneCount
            var recruiting = false
            var mayRecruit = cap != nil
            func spawn(initial: (response: HTTPClientResponse, claim: SegmentMap.Claim)?, ownsSlot: Bool) {
                // The first connection stays on the download's loop, where the probe's
                // response it continues arrived; each other one takes the next loop, so
                // that the cores share the work. (Named explicitly: an inherited preference
                // was lost in release builds, and the writes went back to the shared pool.)
                let lane = spawned % lanes
                group.addTask(executorPreference: active == 0 ? home : DataPlane.nextExecutor()) {
                    defer { if ownsSlot { cap?.release(host) } }
                    try await self.rangeWorker(file: file, initial: initial, lane: lane)
                    return .worker
                }
                active += 1
                spawned += 1
            }
            func recruit() {
                guard let cap, mayRecruit, !recruiting, active < wanted else { return }
                recruiting = true
                group.addTask {
                    try await cap.waitForFreeSlot(host)
                    return .slotFree
                }
            }
            spawn(initial: first, ownsSlot: false)
            let others = cap?.tryAcquire(host, upTo: wanted - 1) ?? (wanted - 1)
            for _ in 0..<others { spawn(initial: nil, ownsSlot: true) }
            recruit()
            while active > 0, let end = try await group.next() {
                switch end {
                case .slotFree:
                    recruiting = false
                    let more = cap?.tryAcquire(host, upTo: wanted - active) ?? 0
                    for _ in 0..<more { spawn(initial: nil, ownsSlot: true) }
                case .worker:
                    active -= 1
                    // A worker that ends has found nothing left to claim or steal: no
                    // more are needed.
                    mayRecruit = false
                }
                recruit()
            }
            group.cancelAll()
        }
        guard state.isComplete else {
            throw SluiceError(.invalidResponse, "the connections ended without covering the whole file")
        }
    }

    private enum WorkerEnd {
        case worker
        case slotFree
    }

    /// Fetches claimed segments until nothing is left to claim or steal.
    private func rangeWorker(file: PartialFile, initial: (response: HTTPClientResponse, claim: SegmentMap.Claim)?, lane: Int)
        async throws
    {
        // The probe's answer (the first worker's) is the primary's.
        var lane = initial == nil ? lane : 0
        var claim = initial?.claim ?? state.claim()
        var response = initial?.response
        var machine = RetryMachine(policy: options.retry, failures: options.priorFailures)
        var progressMark = state.bytesDone
        var useOriginalURL = false
        while let current = claim {
            do {
                if response == nil {
                    guard let range = state.remainingRange(of: current.segment), !range.isEmpty else {
                        state.release(segment: current.segment)
                        claim = state.claim()
                        continue
                    }
                    response = try await fetch(range, useOriginalURL: useOriginalURL, lane: lane)
                }
                let body = response!.body
                response = nil
                try await write(body, to: file, segment: current.segment, source: state.lane(lane)?.source ?? 0)
                guard state.isFinished(segment: current.segment) else {
                    throw TransientFailure(error: SluiceError(.network, "the connection closed before the range was complete"))
                }
                state.release(segment: current.segment)
                claim = state.claim()
            } catch {
                response = nil
                // Bytes on disk since the last failure forgive it, unless this connection
                // stalled: a trickle's few bytes must not keep it alive forever.
                let done = state.bytesDone
                if done > progressMark, !(error is StallFailure) {
                    _ = machine.handle(.progressed, jitter: 0)
                }
                progressMark = done
                if state.remote?.finalURL != nil { useOriginalURL = true }
                let ending: (any Error)?
                if lane > 0 {
                    ending = await recoverOnMirror(from: error, lane: &lane, machine: &machine)
                } else {
                    do {
                        try await recover(from: error, with: &machine)
                        ending = nil
                    } catch {
                        ending = error
                    }
                }
                if let ending {
                    state.release(segment: current.segment)
                    throw ending
                }
            }
        }
    }

    /// After `error` on a mirror's connection: nil to go on, retrying on the mirror or, once
    /// the mirror is given up on (it failed, or its file is not the primary's any more), on
    /// the primary with a fresh count of failures; else what ends the connection (a stop, a
    /// failure of this side's such as the disk).
    private func recoverOnMirror(from error: any Error, lane: inout Int, machine: inout RetryMachine) async -> (any Error)? {
        let stops = { (error: any Error) in error is CancellationError || error is LeaseLost }
        guard let mirror = state.lane(lane) else {
            // Another connection gave this one's mirror up while it was failing there: none
            // of the mirror's failures count against the primary.
            if stops(error) || Self.isLocalFailure(error) { return error }
            lane = 0
            machine = RetryMachine(policy: options.retry, failures: options.priorFailures)
            return nil
        }
        do {
            try await recover(from: error, with: &machine)
            return nil
        } catch {
            if stops(error) || !Self.isMirrorsFault(error) { return error }
            state.giveUp(source: mirror.source, as: error is RestartFromZero ? .excluded : .failed)
            logger.notice("a mirror is given up on: \(error)", metadata: ["url": "\(URLCredentials.redacted(mirror.url))"])
            lane = 0
            machine = RetryMachine(policy: options.retry, failures: options.priorFailures)
            return nil
        }
    }

    /// Whether a failure on a mirror's connection is the mirror's: its answers, its
    /// network, its file changing, its silence, or a long wait it asked for.
    static func isMirrorsFault(_ error: any Error) -> Bool {
        if error is RestartFromZero || error is RetryLater { return true }
        return MirroredDownload.isSourceFailure(error)
    }

    /// Whether an error on a connection, as it was raised (before the retry machine judged
    /// it), is this side's: the disk, a file that cannot be written.
    static func isLocalFailure(_ error: any Error) -> Bool {
        guard let error = error as? SluiceError else { return false }
        return [.io, .noSpace, .fileTooLarge].contains(error.code)
    }

    /// Requests `range` under the download's validator and accepts only the exact 206.
    private func fetch(_ range: Range<Int64>, useOriginalURL: Bool, lane: Int) async throws -> HTTPClientResponse {
        guard let remote = state.remote, let total = remote.totalBytes else {
            preconditionFailure("range fetch before the probe")
        }
        let mirror = state.lane(lane)
        let target = mirror?.url ?? (useOriginalURL ? url : (remote.finalURL ?? url))
        let validators = mirror.map(\.validators) ?? remote.validators
        let response = try await execute(makeRequest(url: target, range: range, ifRange: validators?.ifRangeValue)).response
        let status = Int(response.status.code)
        let verdict = ResponseCheck.ranged(
            status: status, header: { response.headers.first(name: $0) }, range: range, total: total,
            validators: validators
        )
        if let event = RetryMachine.event(for: verdict, status: status) { throw MachineEvent(event: event) }
        return response
    }

    /// Streams a body into its segment, each buffer written at its offset as it arrives,
    /// stopping at the segment's end (which moves down when another worker takes half).
    private func write(_ body: HTTPClientResponse.Body, to file: PartialFile, segment: Int, source: Int) async throws {
        state.connectionOpened()
        defer { state.connectionClosed() }
        var watch = makeStallWatch()
        let started = options.clock.elapsed()
        for try await buffer in body {
            let readable = buffer.readableBytes
            try check(&watch, received: readable, since: started)
            var consumed = 0
            while consumed < readable {
                let (offset, allowed) = state.reserve(Int64(readable - consumed), segment: segment)
                if allowed == 0 { return }
                do {
                    try buffer.withUnsafeReadableBytes { bytes in
                        try file.write(UnsafeRawBufferPointer(rebasing: bytes[consumed..<(consumed + Int(allowed))]), at: offset)
                    }
                } catch {
                    state.abandon(segment: segment)
                    throw error
                }
                state.commit(segment: segment, count: allowed, source: source)
                consumed += Int(allowed)
            }
            try await options.rateLimiter?.consume(readable)
            if state.isFinished(segment: segment) { return }
        }
    }
}
