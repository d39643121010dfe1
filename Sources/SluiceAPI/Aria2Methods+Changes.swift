import Aria2RPC
import Foundation
import JobService
import SluiceCore

/// aria2's writes: adding, removing, moving and changing jobs, and the options it shows.
extension Aria2Methods {
    func addUri(_ call: Aria2Call) async throws -> JSONValue {
        guard case .array(let uris)? = call.param(0), case .string(let url)? = uris.first else {
            throw Aria2Failure("addUri takes an array of URIs")
        }
        // aria2 takes the other URIs as mirrors of the first, as Sluice's `mirrors` are;
        // the same URI given twice is one source.
        var mirrors: [String] = []
        for uri in uris.dropFirst() {
            guard case .string(let mirror) = uri else { throw Aria2Failure("addUri takes an array of URIs") }
            if mirror != url, !mirrors.contains(mirror) { mirrors.append(mirror) }
        }
        let options = try Aria2JobOptions(call.param(1), documents: documents)
        let request: CreateJobRequest
        do {
            request = try CreateJobRequest(
                url: url, filename: options.filename, connections: options.connections ?? 4,
                headers: options.headers, paused: options.paused ?? false, limitRate: options.limitRate?.value,
                proxy: options.proxy, directory: options.directory, checksum: options.checksum, mirrors: mirrors)
        } catch let error as SluiceError {
            throw Aria2Failure(error.message)
        }
        let (job, _) = try await jobs.create(request, idempotencyKey: nil)
        return .string(Aria2GID.of(jobID: job.id))
    }

    /// `remove`: the job goes as `DELETE /jobs/ID` makes it go (its partial file too); RPC
    /// keeps its result as `removed` until `removeDownloadResult`.
    func remove(_ call: Aria2Call) async throws -> JSONValue {
        let (gid, id) = try call.jobID(at: 0)
        guard let job = try await jobs.job(id: id) else { throw Aria2Failure.notFound(gid) }
        guard job.state.isLive else { throw Aria2Failure("Active Download not found for GID#\(gid)") }
        try await jobs.delete(id: id, deleteFile: true)
        results.keep(job)
        return .string(gid)
    }

    func removeDownloadResult(_ call: Aria2Call) async throws -> JSONValue {
        let (gid, id) = try call.jobID(at: 0)
        if results.forget(id: id) { return .string("OK") }
        guard let job = try await jobs.job(id: id), !job.state.isLive else {
            throw Aria2Failure("Could not remove download result of GID#\(gid)")
        }
        // A finished job's record goes; its file stays, as aria2's does.
        try await jobs.delete(id: id, deleteFile: false)
        return .string("OK")
    }

    /// `changePosition(gid, pos, how)`: moves a waiting job in the queue by giving it a
    /// priority between its new neighbours'; answers its new place.
    func changePosition(_ call: Aria2Call) async throws -> JSONValue {
        let (_, id) = try call.jobID(at: 0)
        guard let position = try call.integer(at: 1, "pos"), case .string(let how)? = call.param(2) else {
            throw Aria2Failure("changePosition takes a GID, a position and POS_SET, POS_CUR or POS_END")
        }
        let queue = try await waiting()
        guard let current = queue.firstIndex(where: { $0.id == id }) else {
            throw Aria2Failure("GID#\(Aria2GID.of(jobID: id)) is not waiting")
        }
        let others = queue.filter { $0.id != id }
        guard let target = Aria2Page.target(how: how, position: position, current: current, others: others.count) else {
            throw Aria2Failure("how must be POS_SET, POS_CUR or POS_END")
        }
        let priority: Int
        if others.isEmpty {
            priority = queue[current].priority
        } else if target == 0 {
            priority = others[0].priority + 1
        } else if target == others.count {
            priority = others[others.count - 1].priority - 1
        } else {
            // Ahead of the job now at `target`, behind the one before it.
            priority = others[target].priority + 1
        }
        var patch = JobPatch()
        patch.priority = max(-1_000_000, min(1_000_000, priority))
        _ = try await jobs.edit(id: id, patch)
        let after = try await waiting()
        return .integer(Int64(after.firstIndex { $0.id == id } ?? target))
    }

    /// `changeUri(gid, fileIndex, delUris, addUris)`: a new URI re-targets the job (a
    /// `PATCH` of its `url`); answers `[deleted, added]`.
    func changeUri(_ call: Aria2Call) async throws -> JSONValue {
        let (_, id) = try call.jobID(at: 0)
        guard try call.integer(at: 1, "fileIndex") == 1 else { throw Aria2Failure("fileIndex must be 1: a job has one file") }
        guard case .array(let deleted)? = call.param(2), case .array(let added)? = call.param(3) else {
            throw Aria2Failure("changeUri takes the URIs to delete and to add, as arrays")
        }
        guard case .string(let url)? = added.first else {
            // Taking away the only URI would leave the job nothing to download from.
            throw Aria2Failure("changeUri must add a URI: a job downloads from exactly one")
        }
        var patch = JobPatch()
        patch.url = url
        do {
            try CreateJobRequest.validateURL(url)
        } catch let error as SluiceError {
            throw Aria2Failure(error.message)
        }
        _ = try await jobs.edit(id: id, patch)
        return .array([.integer(Int64(min(deleted.count, 1))), .integer(1)])
    }

    func changeOption(_ call: Aria2Call) async throws -> JSONValue {
        let (_, id) = try call.jobID(at: 0)
        let options = try Aria2JobOptions(call.param(1), documents: documents)
        // A job's directory is set when it is added; its own, sent back, is fine.
        if options.namesDirectory, try await download(id: id, keys: ["gid"]).job.directory != options.directory {
            throw Aria2Failure("dir cannot change once a download is added")
        }
        var patch = JobPatch()
        patch.connections = options.connections
        patch.limitRate = options.limitRate
        patch.filename = options.filename.map { .set($0) }
        if !options.headers.isEmpty { patch.headers = options.headers }
        patch.proxy = options.proxy.map { .set($0) }
        if patch != JobPatch() { _ = try await jobs.edit(id: id, patch) }
        return .string("OK")
    }

    /// `getOption`: the job's settings in aria2's names.
    func options(of job: JobSnapshot) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("dir", .string(Aria2Download(job: job).directory(documents: documents))),
            ("split", .string(String(job.connections))),
            ("max-connection-per-server", .string(String(job.connections))),
            ("max-download-limit", .string(String(job.limitRate ?? 0))),
        ]
        if let name = job.requestedFilename { members.append(("out", .string(name))) }
        if let checksum = job.expectedChecksum { members.append(("checksum", .string(checksum.description))) }
        return .object(members.sorted { $0.0 < $1.0 })
    }

    func globalOptions() async -> JSONValue {
        let queue = await jobs.queue()
        return .object([
            ("dir", .string(documents)),
            ("max-concurrent-downloads", .string(String(queue.settings.maxActive))),
            ("max-connection-per-server", .string("16")),
            ("max-overall-download-limit", .string(String(queue.settings.limitRate ?? 0))),
            ("split", .string("4")),
        ])
    }

}
