/// `POST /jobs/batch`: many new jobs in one request, `{"jobs": [create body, ...]}`, each
/// read as `POST /jobs` reads one. One that is wrong refuses the whole batch, naming its place
/// (`jobs[3].url`), and nothing is made.
public struct CreateJobBatch: Sendable, Equatable, Decodable {
    /// The most jobs one batch may hold (a 64 KiB body holds about a thousand short ones).
    public static let limit = 1000

    public var jobs: [CreateJobRequest]

    public init(jobs: [CreateJobRequest]) { self.jobs = jobs }

    public init(from decoder: any Decoder) throws {
        let body = try PatchBody(decoder, allowed: ["jobs"], unknown: "is not a field of a batch")
        let key = PatchBody.Key(stringValue: "jobs")
        let wrong = SluiceError(.invalidField, "jobs must list 1 to \(Self.limit) new jobs", field: "jobs")
        guard body.container.contains(key), var list = try? body.container.nestedUnkeyedContainer(forKey: key),
            let count = list.count, (1...Self.limit).contains(count)
        else { throw wrong }
        var jobs: [CreateJobRequest] = []
        jobs.reserveCapacity(count)
        while !list.isAtEnd {
            let index = list.currentIndex
            do {
                jobs.append(try list.decode(CreateJobRequest.self))
            } catch let error as SluiceError {
                throw Self.placed(error, at: index)
            } catch {
                throw SluiceError(.invalidField, "jobs[\(index)] must be a JSON object", field: "jobs[\(index)]")
            }
        }
        self.jobs = jobs
    }

    /// A job's error as the batch's: its place in the list before its field and its message.
    /// (A job that is not an object is a wrong field of the batch, not a wrong body; an error
    /// about the address names `url`.)
    public static func placed(_ error: SluiceError, at index: Int) -> SluiceError {
        let place = "jobs[\(index)]"
        if error.code == .invalidJSON { return SluiceError(.invalidField, "\(place) must be a JSON object", field: place) }
        var placed = error
        placed.message = "\(place): \(error.message)"
        let addressCodes: Set<SluiceError.Code> = [.invalidURL, .unsupportedScheme, .forbiddenTarget]
        let field = error.field ?? (addressCodes.contains(error.code) ? "url" : nil)
        placed.field = place + (field.map { ".\($0)" } ?? "")
        return placed
    }

    /// What a client may put in one batch's body, under the service's 64 KiB.
    public static let clientBytes = 60 << 10

    /// Create bodies in batches a service takes: at most `limit` jobs and `maxBytes` each, in
    /// order, each with the place of its first job among all of them.
    public static func batches(of bodies: [JSONValue], maxBytes: Int = clientBytes) -> [(first: Int, bodies: [JSONValue])] {
        var batches: [(first: Int, bodies: [JSONValue])] = []
        var current: [JSONValue] = []
        var size = 0
        for (index, body) in bodies.enumerated() {
            let length = body.text.utf8.count + 1
            if !current.isEmpty, size + length > maxBytes || current.count == limit {
                batches.append((index - current.count, current))
                current = []
                size = 0
            }
            current.append(body)
            size += length
        }
        if !current.isEmpty { batches.append((bodies.count - current.count, current)) }
        return batches
    }

    /// A batch's error (`jobs[3]: ...`) with the job's place among all of them, counted from 1
    /// as a person counts the URLs of a command line (`URL 204: ...`).
    public static func renumbered(_ message: String, first: Int) -> String {
        guard let match = message.firstMatch(of: /jobs\[(\d+)\]/), let index = Int(match.1) else { return message }
        return message[..<match.range.lowerBound] + "URL \(first + index + 1)" + message[match.range.upperBound...]
    }
}
