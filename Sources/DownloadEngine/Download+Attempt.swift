import AsyncHTTPClient
import Foundation
import SluiceCore
import NIOHTTP1
import Logging

extension Download {
    /// One pass from what is on disk to a complete partial file. Returns the SHA-256 when
    /// it was computed while streaming. Throws `RestartFromZero` when the remote changed.
    /// Under a per-host cap the pass first waits for one connection to the host, which its
    /// probe and first worker use.
    func attempt(file: PartialFile, resumeFrom checkpoint: DownloadCheckpoint?) async throws -> String? {
        guard let cap = options.hostConnections else { return try await attemptHolding(file: file, resumeFrom: checkpoint) }
        let host = HostConnections.key(for: url)
        try await cap.acquire(host)
        defer { cap.release(host) }
        return try await attemptHolding(file: file, resumeFrom: checkpoint)
    }

    private func attemptHolding(file: PartialFile, resumeFrom checkpoint: DownloadCheckpoint?) async throws -> String? {
        if let checkpoint, let total = checkpoint.totalBytes {
            let remote = DownloadState.Remote(
                totalBytes: total, acceptsRanges: true, validators: checkpoint.validators,
                finalURL: checkpoint.finalURL, fileName: target.fileName ?? checkpoint.fileName,
                announcedSHA256: checkpoint.announcedSHA256
            )
            let map = SegmentMap(
                total: total, written: checkpoint.writtenRanges, parts: options.connections,
                minimumSplit: options.minimumSplit
            )
            logger.info("resuming with \(map.writtenBytes) of \(total) bytes on disk", metadata: ["url": "\(url)"])
            try reserveSpace(total, in: file)
            state.setRemote(remote, map: map)
            await joinMirrors(total: total)
            state.setPhase(.downloading)
            try await runWorkers(file: file, first: nil)
            return nil
        }

        if options.continuePartial, let size = try? file.size(), size > 0, try await continueExisting(file: file, size: size) {
            return nil
        }
        // The store first (see `LeaseLost`), then the file. A job that never ran, whose run
        // has stored nothing yet, has no checkpoint to remove: its creation was its one write.
        if !options.neverRun || state.checkpointedBytes != nil {
            try await store.remove()
            state.setCheckpointedBytes(nil)
        }
        try file.truncate()
        state.markStartedFromZero()
        let (response, probe, finalURL) = try await self.probe()
        if let agreement = options.agreeWith,
            let reason = agreement.disagreement(
                length: probe.totalBytes, announced: DigestHeaders.announced({ response.headers[$0] }, wholeBody: true))
        {
            throw SourceDisagrees(reason: reason)
        }
        try checkAnnouncedDigests(response, wholeBody: true, fresh: true)
        noteLinkedMirrors(response, base: finalURL)
        let remote = DownloadState.Remote(
            totalBytes: probe.totalBytes, acceptsRanges: probe.acceptsRanges, validators: probe.validators,
            finalURL: finalURL == url ? nil : finalURL, fileName: target.fileName ?? downloadName(response, url: finalURL),
            announcedSHA256: Self.announcedSHA256(response)
        )
        state.setPhase(.downloading)
        // Without a validator to send in If-Range, bytes from two requests could be from two
        // versions of the file: one connection, and any interruption starts over from 0.
        guard probe.acceptsRanges, let total = probe.totalBytes, probe.validators.ifRangeValue != nil else {
            state.setRemote(remote, map: nil)
            if let length = probe.totalBytes {
                try reserveSpace(length, in: file)
            }
            return try await streamWhole(file: file, first: response, total: probe.totalBytes)
        }
        try reserveSpace(total, in: file)
        state.setRemote(remote, map: SegmentMap(total: total, parts: options.connections, minimumSplit: options.minimumSplit))
        await joinMirrors(total: total)
        await saveCheckpoint(file: file)
        let first = state.claim().map { (response: response, claim: $0) }
        try await runWorkers(file: file, first: first)
        return nil
    }

    /// Continues a partial file of `size` bytes that has no checkpoint, as `curl -C -`
    /// does: `Range: bytes=SIZE-`, the prefix on disk taken as it is. True when the file is
    /// now whole; false to start over (the server sent the whole file, or no usable range).
    /// Without a validator the rest comes over one connection, as for a fresh download.
    private func continueExisting(file: PartialFile, size: Int64) async throws -> Bool {
        var machine = RetryMachine(policy: options.retry, failures: options.priorFailures)
        while true {
            do {
                let fetched = try await execute(makeRequest(url: url, range: size..<Int64.max, ifRange: nil))
                let response = fetched.response
                let status = Int(response.status.code)
                switch ResponseCheck.continuation(status: status, header: { response.headers.first(name: $0) }, offset: size) {
                case .success(.startOver):
                    return false
                case .success(.complete):
                    let remote = DownloadState.Remote(
                        totalBytes: size, acceptsRanges: true, validators: nil, finalURL: nil,
                        fileName: target.fileName ?? downloadName(response, url: fetched.url)
                    )
                    state.setRemote(remote, map: SegmentMap(total: size, written: [0..<size], parts: 1))
                    return true
                case .success(.resume(let probe)):
                    try checkAnnouncedDigests(response, wholeBody: false, fresh: true)
                    let total = probe.totalBytes ?? size
                    let remote = DownloadState.Remote(
                        totalBytes: total, acceptsRanges: true, validators: probe.validators,
                        finalURL: fetched.url == url ? nil : fetched.url,
                        fileName: target.fileName ?? downloadName(response, url: fetched.url),
                        announcedSHA256: Self.announcedSHA256(response)
                    )
                    let workers = probe.validators.ifRangeValue == nil ? 1 : options.connections
                    let map = SegmentMap(total: total, written: [0..<size], parts: workers, minimumSplit: options.minimumSplit)
                    try reserveSpace(total, in: file)
                    state.setRemote(remote, map: map)
                    state.setPhase(.downloading)
                    logger.info("continuing a partial file from byte \(size) of \(total)", metadata: ["url": "\(url)"])
                    await saveCheckpoint(file: file)
                    let first = state.claim().map { (response: response, claim: $0) }
                    try await runWorkers(file: file, first: first, workers: workers)
                    return true
                case .failure(let failure):
                    throw MachineEvent(event: RetryMachine.event(for: failure, status: status))
                }
            } catch {
                try await recover(from: error, with: &machine)
            }
        }
    }

    /// `GET` with `Range: bytes=0-`: its answer tells the size, range support, validators
    /// and name, and its body is the first segment's data.
    func probe() async throws -> (HTTPClientResponse, ResponseCheck.Probe, finalURL: String) {
        var machine = RetryMachine(policy: options.retry, failures: options.priorFailures)
        var askRange = true
        while true {
            do {
                let fetched = try await execute(makeRequest(url: url, range: askRange ? 0..<Int64.max : nil, ifRange: nil))
                let response = fetched.response
                let status = Int(response.status.code)
                switch ResponseCheck.probe(status: status, header: { response.headers.first(name: $0) }) {
                case .success(let probe):
                    return (response, probe, fetched.url)
                case .failure(.emptyRange) where askRange:
                    askRange = false
                    continue
                case .failure(let failure):
                    throw MachineEvent(event: RetryMachine.event(for: failure, status: status))
                }
            } catch {
                try await recover(from: error, with: &machine)
            }
        }
    }

    /// The name a response gives the file: `Content-Disposition`, else the final URL's path.
    private func downloadName(_ response: HTTPClientResponse, url: String) -> String {
        FileNameSanitizer.downloadName(
            contentDisposition: response.headers.first(name: "Content-Disposition"),
            urlPath: URLComponents(string: url)?.percentEncodedPath ?? ""
        )
    }

    /// Reserves the file's length up front when asked to, above the free-space floor.
    private func reserveSpace(_ length: Int64, in file: PartialFile) throws {
        try file.reserve(options.preallocate ? length : 0, keepingFree: options.minimumFreeSpace)
    }
}
