public import SluiceCore

/// A job as aria2 shows a download (`tellStatus`, `tellActive`, `tellWaiting`,
/// `tellStopped`): every number a string, `status` in aria2's words, one file whose one URI
/// is the job's URL. `removed` is a job deleted through RPC whose result RPC still keeps.
public struct Aria2Download: Sendable {
    public var job: JobSnapshot
    public var removed = false
    /// The byte ranges on disk, when known (`bitfield`); nil when the caller did not look.
    public var written: [Range<Int64>]?

    public init(job: JobSnapshot, removed: Bool = false, written: [Range<Int64>]? = nil) {
        self.job = job
        self.removed = removed
        self.written = written
    }

    public var gid: String { Aria2GID.of(jobID: job.id) }

    public var status: String {
        if removed { return "removed" }
        switch job.state {
        case .queued: return "waiting"
        case .running: return "active"
        case .paused: return "paused"
        case .completed: return "complete"
        case .failed: return "error"
        }
    }

    /// Every key aria2 shows for an HTTP download, or those in `keys` (aria2's filter;
    /// unknown names are left out, as aria2 does).
    public func status(documents: String, keys: [String] = []) -> JSONValue {
        let wanted = Set(keys)
        func include(_ key: String) -> Bool { wanted.isEmpty || wanted.contains(key) }
        var members: [(String, JSONValue)] = []
        func add(_ key: String, _ value: @autoclosure () -> JSONValue) {
            if include(key) { members.append((key, value())) }
        }
        let total = job.bytesTotal ?? 0
        let done = job.state == .completed ? max(total, job.bytesDone) : job.bytesDone
        add("gid", .string(gid))
        add("status", .string(status))
        add("totalLength", .string(String(total)))
        add("completedLength", .string(String(done)))
        add("uploadLength", .string("0"))
        add("downloadSpeed", .string(String(job.state == .running ? Int64(max(0, job.speed.rounded())) : 0)))
        add("uploadSpeed", .string("0"))
        add("connections", .string(String(job.state == .running ? job.connections : 0)))
        if include("bitfield") || include("numPieces") || include("pieceLength") {
            let pieces = Aria2Pieces(total: job.bytesTotal, done: job.state == .completed ? [0..<total] : (written ?? []))
            add("numPieces", .string(String(pieces.count)))
            add("pieceLength", .string(String(pieces.length)))
            if let bitfield = pieces.bitfield { add("bitfield", .string(bitfield)) }
        }
        if [.completed, .failed].contains(job.state) || removed {
            add("errorCode", .string(errorCode))
            add("errorMessage", .string(job.error?.message ?? ""))
        }
        add("dir", .string(directory(documents: documents)))
        add("files", files(documents: documents))
        add("verifiedLength", .string("0"))
        add("verifyIntegrityPending", .string("false"))
        return .object(members)
    }

    /// The job's directory: the documents, or its sub-directory there (aria2's `dir`).
    public func directory(documents: String) -> String {
        job.directory.map { documents + "/" + $0 } ?? documents
    }

    /// `getFiles`: the one file.
    public func files(documents: String) -> JSONValue {
        let total = job.bytesTotal ?? 0
        // `path` (once placed) is relative to the documents, sub-directory included.
        let path = job.path.map { documents + "/" + $0 } ?? job.filename.map { directory(documents: documents) + "/" + $0 }
        return .array([
            .object([
                ("index", .string("1")),
                ("path", .string(path ?? "")),
                ("length", .string(String(total))),
                ("completedLength", .string(String(job.state == .completed ? max(total, job.bytesDone) : job.bytesDone))),
                ("selected", .string("true")),
                ("uris", uris),
            ])
        ])
    }

    /// `getUris`: the job's URL, then its mirrors (credentials shown as the job's JSON shows
    /// them); the ones a run has tried are `used`, the rest `waiting`, as aria2c lists them
    /// (a paused download that never ran: every URI `waiting`).
    public var uris: JSONValue {
        let ran = job.state == .running || job.state == .completed || job.state == .failed || job.bytesDone > 0
        return .array(
            job.sources.enumerated().map { index, source in
                let used = source.bytes > 0 || source.failures > 0 || (index == 0 && ran)
                return .object([("uri", .string(URLCredentials.redacted(source.url))), ("status", .string(used ? "used" : "waiting"))])
            })
    }

    /// aria2's exit status for the job's error (its manual's list), where one fits; 1
    /// (unknown) otherwise. 0 for a download that ended well or was removed.
    public var errorCode: String {
        guard job.state == .failed else { return "0" }
        guard let error = job.error else { return "1" }
        switch error.code {
        case "network": return "6"
        case "no_space": return "9"
        case "too_many_redirects": return "23"
        case "invalid_response": return "22"
        case "checksum_mismatch": return "32"
        case "remote_changed": return "8"
        case "http_status":
            if error.message.contains("404") { return "3" }
            if error.message.contains("401") || error.message.contains("403") { return "24" }
            if error.message.contains("503") { return "29" }
            return "22"
        default: return "1"
        }
    }
}
