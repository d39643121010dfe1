public import SluiceCore

/// What aria2's per-download options (`addUri`'s and `changeOption`'s) ask of a job, mapped
/// to Sluice's fields. Options Sluice has no use for are ignored, as aria2 ignores unknown
/// ones; one that would be wrong to ignore (a `dir` outside the documents, a digest it
/// cannot verify) is refused.
public struct Aria2JobOptions: Equatable, Sendable {
    public var filename: String?
    public var connections: Int?
    public var headers: [String: String] = [:]
    /// `max-download-limit`: `.removed` for 0 (unlimited).
    public var limitRate: Patched<Int64>?
    /// `checksum`: `sha-256`, `sha-512`, `sha-1` or `md5` `=HEX`.
    public var checksum: Checksum?
    public var paused: Bool?
    public var proxy: String?
    /// Whether `dir` was given: `directory` is then what it names.
    public var namesDirectory = false
    /// `dir`'s sub-directory of the documents, relative (`music/live`); nil for the
    /// documents directory itself.
    public var directory: String?

    /// - Parameter documents: the documents directory's path: `dir` must be it (front ends
    ///   send back the `dir` they were told) or a directory under it.
    public init(_ options: JSONValue?, documents: String) throws(Aria2Failure) {
        guard let options, options != .null else { return }
        guard case .object(let members) = options else { throw Aria2Failure("options must be a struct") }
        var split: Int?
        var perServer: Int?
        for (name, value) in members {
            switch name {
            case "dir":
                directory = try Self.subdirectory(try Self.text(value, name), of: documents)
                namesDirectory = true
            case "out":
                let out = try Self.text(value, name)
                do {
                    try CreateJobRequest.validateFilename(out)
                } catch {
                    throw Aria2Failure("out must be a plain file name inside dir, without / or \\, . or ..")
                }
                filename = out
            case "split": split = try Self.count(value, name)
            case "max-connection-per-server": perServer = try Self.count(value, name)
            case "max-download-limit":
                let rate = try Self.size(value, name)
                if rate == 0 {
                    limitRate = .removed
                } else {
                    do {
                        try RateLimit.validate(rate, field: name)
                    } catch {
                        throw Aria2Failure("max-download-limit is out of range")
                    }
                    limitRate = .set(rate)
                }
            case "checksum":
                let text = try Self.text(value, name)
                do {
                    checksum = try Checksum(parsing: text)
                } catch {
                    throw Aria2Failure((error as? SluiceError)?.message ?? "checksum must be ALGO=HEX")
                }
            case "pause":
                let text = try Self.text(value, name)
                guard text == "true" || text == "false" else { throw Aria2Failure("pause must be true or false") }
                paused = text == "true"
            case "all-proxy":
                let text = try Self.text(value, name)
                proxy = text.isEmpty ? nil : text
            case "header":
                for line in try Self.lines(value, name) {
                    guard let colon = line.firstIndex(of: ":") else { throw Aria2Failure("header must be NAME: VALUE") }
                    let field = line[..<colon].trimmingSpaces
                    headers[field] = line[line.index(after: colon)...].trimmingSpaces
                }
            case "user-agent": headers["User-Agent"] = try Self.text(value, name)
            case "referer":
                let referer = try Self.text(value, name)
                if referer != "*" { headers["Referer"] = referer }
            default: continue
            }
        }
        // aria2 opens at most `max-connection-per-server` connections to one server, and
        // splits into at most `split`: with one server, the smaller. Sluice's cap is 16.
        if let connections = [split, perServer].compactMap({ $0 }).min() { self.connections = min(connections, 16) }
    }

    /// What `dir` names under `documents`, by its text alone: nil for the documents
    /// directory, else the plain names below it joined by `/`. No `.` or `..` anywhere, so
    /// the text is where it leads, but for symlinks (the job service checks those on disk).
    static func subdirectory(_ dir: String, of documents: String) throws(Aria2Failure) -> String? {
        func parts(_ path: String) -> [String] { path.pathParts.filter { !$0.isEmpty } }
        let given = parts(dir)
        let root = parts(documents)
        // A relative `documents` (`--data ./x`) is matched as it was shown.
        guard dir.hasPrefix("/") == documents.hasPrefix("/"), given.starts(with: root),
            !given.contains(where: { $0 == "." || $0 == ".." })
        else {
            throw Aria2Failure("dir must be the documents directory (\(documents)) or a directory under it, without . or ..")
        }
        let below = Array(given.dropFirst(root.count))
        if below.isEmpty { return nil }
        let directory = below.joined(separator: "/")
        do {
            try CreateJobRequest.validateDirectory(directory)
        } catch {
            throw Aria2Failure("dir: each directory under the documents must be a plain name")
        }
        return directory
    }

    static func text(_ value: JSONValue, _ name: String) throws(Aria2Failure) -> String {
        switch value {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        default: throw Aria2Failure("\(name) must be a string")
        }
    }

    static func count(_ value: JSONValue, _ name: String) throws(Aria2Failure) -> Int {
        guard let number = Int(try text(value, name)), number >= 1 else { throw Aria2Failure("\(name) must be a whole number from 1") }
        return number
    }

    static func size(_ value: JSONValue, _ name: String) throws(Aria2Failure) -> Int64 {
        guard let bytes = Aria2Size.parse(try text(value, name)) else {
            throw Aria2Failure("\(name) must be a size such as 0, 512K or 2M")
        }
        return bytes
    }

    static func lines(_ value: JSONValue, _ name: String) throws(Aria2Failure) -> [String] {
        if case .array(let values) = value { return try values.map { (item) throws(Aria2Failure) in try text(item, name) } }
        return [try text(value, name)]
    }
}

/// aria2's global options that mean something to Sluice's queue.
public struct Aria2GlobalOptions: Equatable, Sendable {
    public var maxActive: Int?
    public var limitRate: Patched<Int64>?

    public init(_ options: JSONValue?) throws(Aria2Failure) {
        guard let options, options != .null else { return }
        guard case .object(let members) = options else { throw Aria2Failure("options must be a struct") }
        for (name, value) in members {
            switch name {
            case "max-concurrent-downloads":
                let count = try Aria2JobOptions.count(value, name)
                guard QueueSettings.maxActiveRange.contains(count) else {
                    throw Aria2Failure("max-concurrent-downloads must be between 1 and \(QueueSettings.maxActiveRange.upperBound)")
                }
                maxActive = count
            case "max-overall-download-limit":
                let rate = try Aria2JobOptions.size(value, name)
                limitRate = rate == 0 ? .removed : .set(rate)
            default: continue
            }
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
